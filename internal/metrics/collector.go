package metrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/internal/mqtt/broker"
	"github.com/robotexec/robotexec/internal/observers"
	"github.com/robotexec/robotexec/internal/view"
	"github.com/robotexec/robotexec/subscribers"
)

// Executor is what a Collector reads of an executor; *executor.Executor
// has it.
type Executor interface {
	Callbacks() []executor.Callback
}

// MQTT is what a Collector reads of an MQTT client; *mqtt.Client has it.
type MQTT interface {
	Stats() mqtt.Stats
}

// Broker is what a Collector reads of the embedded broker;
// *broker.Broker has it.
type Broker interface {
	Stats() broker.Stats
}

// View is what a Collector reads of the live view; *view.Server has it.
type View interface {
	Stats() view.Stats
}

// Sources are what a Collector reads.
type Sources struct {
	// Executor lists the callbacks with their subscriptions, timers and
	// panic counts.
	Executor Executor
	// Runs holds the callbacks' duration and latency histograms.
	// (optional) Without it there are no histograms.
	Runs *observers.Runs
	// MQTT is the client whose connection and drops are exported.
	// (optional)
	MQTT MQTT
	// Broker is the embedded broker whose connections and refusals are
	// exported. (optional)
	Broker Broker
	// View is the live view whose connections and drops are exported.
	// (optional)
	View View
}

// Collector is a prometheus.Collector of robotexec's metrics; see the
// package documentation. Make one with NewCollector.
type Collector struct {
	src Sources

	duration, latency *prometheus.Desc
	queueDepth        *prometheus.Desc
	dropped           *prometheus.Desc
	missed            *prometheus.Desc
	panics            *prometheus.Desc
	connected         *prometheus.Desc
	reconnects        *prometheus.Desc
	broker            *prometheus.Desc
	sessionsLost      *prometheus.Desc
	received          *prometheus.Desc
	published         *prometheus.Desc
	publishFailures   *prometheus.Desc
	refused           *prometheus.Desc
	intake, outbound  *prometheus.Desc
	brokerConns       *prometheus.Desc
	brokerRefused     *prometheus.Desc
	viewConns         *prometheus.Desc
	viewDropped       *prometheus.Desc
	viewChannels      *prometheus.Desc
	viewEvicted       *prometheus.Desc
	viewRefused       *prometheus.Desc

	bounds []float64
}

// NewCollector returns a collector of src.
func NewCollector(src Sources) *Collector {
	cb := []string{"node", "callback"}
	return &Collector{
		src: src,
		duration: prometheus.NewDesc("robotexec_callback_duration_seconds",
			"How long callbacks ran.", cb, nil),
		latency: prometheus.NewDesc("robotexec_dispatch_latency_seconds",
			"Time from a callback's trigger (its message's arrival, its timer's deadline) to its start.", cb, nil),
		queueDepth: prometheus.NewDesc("robotexec_queue_depth",
			"Messages waiting in a subscription's queue.", cb, nil),
		dropped: prometheus.NewDesc("robotexec_messages_dropped_total",
			"Messages dropped, by reason; without node and callback, by the MQTT client before any subscription's queue.", append(cb, "reason"), nil),
		missed: prometheus.NewDesc("robotexec_timer_missed_ticks_total",
			"Timer deadlines skipped because the timer's callback started more than a period late.", cb, nil),
		panics: prometheus.NewDesc("robotexec_callback_panics_total",
			"Callbacks that panicked (recovered, logged and counted).", cb, nil),
		connected: prometheus.NewDesc("robotexec_mqtt_connected",
			"1 while the MQTT client is connected and subscribed, else 0.", nil, nil),
		reconnects: prometheus.NewDesc("robotexec_mqtt_reconnects_total",
			"Connections to the MQTT broker after the first.", nil, nil),
		broker: prometheus.NewDesc("robotexec_mqtt_broker",
			"1, labelled with the URL of the broker the MQTT client is connected to (with a list of brokers, which one); no series while it is not connected.", []string{"broker"}, nil),
		sessionsLost: prometheus.NewDesc("robotexec_mqtt_sessions_lost_total",
			"Reconnections of the persistent session to a broker that did not have it (session_present=false): messages published to the subscriptions meanwhile may be missed.", nil, nil),
		received: prometheus.NewDesc("robotexec_mqtt_messages_received_total",
			"Messages received from the MQTT broker.", nil, nil),
		published: prometheus.NewDesc("robotexec_mqtt_messages_published_total",
			"Messages handed to the MQTT client for publication.", nil, nil),
		publishFailures: prometheus.NewDesc("robotexec_mqtt_publish_failures_total",
			"Publications that failed (not connected, closed, timed out).", nil, nil),
		refused: prometheus.NewDesc("robotexec_mqtt_refused_total",
			"Publications and subscriptions that the broker refused, by its reason (MQTT 5 reason codes: not_authorized, quota_exceeded, packet_too_large, ...).", []string{"reason"}, nil),
		intake: prometheus.NewDesc("robotexec_mqtt_intake_messages",
			"Messages received from the MQTT broker and not yet handed to the subscriptions' queues.", nil, nil),
		outbound: prometheus.NewDesc("robotexec_mqtt_outbound_messages",
			"Publications waiting to be handed to the MQTT broker connection.", nil, nil),
		brokerConns: prometheus.NewDesc("robotexec_broker_connections",
			"Connections open to the embedded broker, those not yet authenticated included.", nil, nil),
		brokerRefused: prometheus.NewDesc("robotexec_broker_refused_total",
			"What the embedded broker refused: connections over mqtt.max_connections (max_connections), CONNECTs over 64 KiB (connect_too_large) or late (connect_timeout), packets over the maximum size (packet_too_large), publications outside the user's write filters (not_authorized).", []string{"reason"}, nil),
		viewConns: prometheus.NewDesc("robotexec_view_connections",
			"Viewers connected to the live view.", nil, nil),
		viewDropped: prometheus.NewDesc("robotexec_view_dropped_total",
			"Messages not sent to a viewer of the live view because its send queue was full, by connection (its number and address); connection=\"closed\" sums the connections that ended.", []string{"connection", "remote"}, nil),
		viewChannels: prometheus.NewDesc("robotexec_view_channels",
			"Channels the live view advertises.", nil, nil),
		viewEvicted: prometheus.NewDesc("robotexec_view_evicted_total",
			"Topics whose channels the live view unadvertised to make room past view.max_topics, the least recently seen first.", nil, nil),
		viewRefused: prometheus.NewDesc("robotexec_view_refused_total",
			"WebSocket upgrades the live view refused, by reason: from a web page of an origin that is not the view's own nor in view.allowed_origins (origin, 403), without valid credentials (unauthorized, 401).", []string{"reason"}, nil),
		bounds: observers.BucketBounds(),
	}
}

// Describe sends the descriptors of every metric.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{
		c.duration, c.latency, c.queueDepth, c.dropped, c.missed, c.panics,
		c.connected, c.reconnects, c.broker, c.sessionsLost, c.received, c.published, c.publishFailures, c.refused,
		c.intake, c.outbound, c.brokerConns, c.brokerRefused, c.viewConns, c.viewDropped, c.viewChannels, c.viewEvicted, c.viewRefused,
	} {
		ch <- d
	}
}

// key is a series' node and callback labels.
type key struct{ node, callback string }

// series accumulates the values of one node and callback: callbacks that
// share names share series.
type series struct {
	key
	sub, timer        bool
	queued            int
	dropped           [len(reasons)]uint64
	missed, panics    uint64
	duration, latency observers.HistogramSnapshot
}

// reasons are the drop reasons exported for every subscription, zeros
// included, so that rates start from the first scrape.
var reasons = [...]subscribers.Reason{
	subscribers.QueueFull, subscribers.Closed, subscribers.TooLarge,
	subscribers.Malformed, subscribers.RateLimited, subscribers.Invalid,
	subscribers.Evicted,
}

// Collect reads the sources and sends the metrics.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	var order []*series
	byKey := map[key]*series{}
	get := func(k key) *series {
		s := byKey[k]
		if s == nil {
			s = &series{key: k}
			byKey[k] = s
			order = append(order, s)
		}
		return s
	}
	if c.src.Executor != nil {
		for _, cb := range c.src.Executor.Callbacks() {
			s := get(key{cb.Owner, cb.Name})
			s.panics += cb.Panics
			var id uint64
			switch {
			case cb.Subscription != nil:
				s.sub = true
				st := cb.Subscription.Stats()
				s.queued += st.Queued
				for i, r := range reasons {
					s.dropped[i] += st.Dropped[r]
				}
				id = cb.Subscription.ID()
			case cb.Timer != nil:
				s.timer = true
				s.missed += cb.Timer.Missed()
				id = cb.Timer.ID()
			}
			if c.src.Runs == nil {
				continue
			}
			if rec := c.src.Runs.Lookup(id); rec != nil {
				s.duration.Add(rec.Duration())
				s.latency.Add(rec.Latency())
			}
		}
	}
	for _, s := range order {
		lv := []string{s.node, s.callback}
		ch <- prometheus.MustNewConstMetric(c.panics, prometheus.CounterValue, float64(s.panics), lv...)
		if c.src.Runs != nil {
			ch <- c.histogram(c.duration, s.duration, lv)
			ch <- c.histogram(c.latency, s.latency, lv)
		}
		if s.sub {
			ch <- prometheus.MustNewConstMetric(c.queueDepth, prometheus.GaugeValue, float64(s.queued), lv...)
			for i, r := range reasons {
				ch <- prometheus.MustNewConstMetric(c.dropped, prometheus.CounterValue, float64(s.dropped[i]), s.node, s.callback, r.String())
			}
		}
		if s.timer {
			ch <- prometheus.MustNewConstMetric(c.missed, prometheus.CounterValue, float64(s.missed), lv...)
		}
	}
	c.collectMQTT(ch)
	c.collectBroker(ch)
	c.collectView(ch)
}

// collectView sends the live view's metrics.
func (c *Collector) collectView(ch chan<- prometheus.Metric) {
	if c.src.View == nil {
		return
	}
	st := c.src.View.Stats()
	ch <- prometheus.MustNewConstMetric(c.viewConns, prometheus.GaugeValue, float64(len(st.Connections)))
	ch <- prometheus.MustNewConstMetric(c.viewChannels, prometheus.GaugeValue, float64(st.Channels))
	ch <- prometheus.MustNewConstMetric(c.viewEvicted, prometheus.CounterValue, float64(st.Evicted))
	for _, r := range []string{view.RefusedOrigin, view.RefusedUnauthorized} {
		ch <- prometheus.MustNewConstMetric(c.viewRefused, prometheus.CounterValue, float64(st.Refused[r]), r)
	}
	ch <- prometheus.MustNewConstMetric(c.viewDropped, prometheus.CounterValue, float64(st.DroppedClosed), "closed", "")
	for _, cs := range st.Connections {
		ch <- prometheus.MustNewConstMetric(c.viewDropped, prometheus.CounterValue, float64(cs.Dropped), strconv.FormatUint(cs.ID, 10), cs.Remote)
	}
}

// collectMQTT sends the MQTT client's metrics.
func (c *Collector) collectMQTT(ch chan<- prometheus.Metric) {
	if c.src.MQTT == nil {
		return
	}
	st := c.src.MQTT.Stats()
	conn := 0.0
	if st.Connected {
		conn = 1
	}
	ch <- prometheus.MustNewConstMetric(c.connected, prometheus.GaugeValue, conn)
	ch <- prometheus.MustNewConstMetric(c.reconnects, prometheus.CounterValue, float64(st.Reconnects))
	if st.Broker != "" {
		ch <- prometheus.MustNewConstMetric(c.broker, prometheus.GaugeValue, 1, st.Broker)
	}
	ch <- prometheus.MustNewConstMetric(c.sessionsLost, prometheus.CounterValue, float64(st.SessionsLost))
	ch <- prometheus.MustNewConstMetric(c.received, prometheus.CounterValue, float64(st.Received))
	ch <- prometheus.MustNewConstMetric(c.published, prometheus.CounterValue, float64(st.Published))
	ch <- prometheus.MustNewConstMetric(c.publishFailures, prometheus.CounterValue, float64(st.PublishFailed))
	ch <- prometheus.MustNewConstMetric(c.intake, prometheus.GaugeValue, float64(st.Pending))
	ch <- prometheus.MustNewConstMetric(c.outbound, prometheus.GaugeValue, float64(st.Outbound))
	for r, n := range st.Refused {
		ch <- prometheus.MustNewConstMetric(c.refused, prometheus.CounterValue, float64(n), r.Label())
	}
	for _, r := range []subscribers.Reason{subscribers.QueueFull, subscribers.TooLarge, subscribers.Unrouted} {
		ch <- prometheus.MustNewConstMetric(c.dropped, prometheus.CounterValue, float64(st.Dropped[r]), "", "", r.String())
	}
}

// collectBroker sends the embedded broker's metrics.
func (c *Collector) collectBroker(ch chan<- prometheus.Metric) {
	if c.src.Broker == nil {
		return
	}
	st := c.src.Broker.Stats()
	ch <- prometheus.MustNewConstMetric(c.brokerConns, prometheus.GaugeValue, float64(st.Connections))
	for _, r := range []struct {
		label string
		n     uint64
	}{
		{"max_connections", st.ConnectionsRefused}, {"connect_too_large", st.ConnectsTooLarge},
		{"connect_timeout", st.ConnectTimeouts}, {"packet_too_large", st.PacketsTooLarge}, {"not_authorized", st.Unauthorized},
	} {
		ch <- prometheus.MustNewConstMetric(c.brokerRefused, prometheus.CounterValue, float64(r.n), r.label)
	}
}

// histogram turns a snapshot into a Prometheus histogram, whose buckets are
// cumulative.
func (c *Collector) histogram(d *prometheus.Desc, h observers.HistogramSnapshot, lv []string) prometheus.Metric {
	buckets := make(map[float64]uint64, len(c.bounds))
	var cum uint64
	for i, b := range c.bounds {
		cum += h.Counts[i]
		buckets[b] = cum
	}
	return prometheus.MustNewConstHistogram(d, h.Count, float64(h.Sum)/1e9, buckets, lv...)
}
