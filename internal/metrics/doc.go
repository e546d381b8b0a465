// Package metrics exports robotexec's metrics to Prometheus and serves
// them with a health check and the Go profiler. It is the only package
// that imports github.com/prometheus/client_golang.
//
// [Collector] is a prometheus.Collector that reads, at scrape time, the
// counters the executor, its subscriptions and timers, the MQTT client and
// observers.Runs keep anyway: nothing is counted twice on the dispatch
// path. The metric names are those of docs/observability.md (Metrics,
// health and profiles):
//
//	robotexec_callback_duration_seconds   histogram  node, callback
//	robotexec_dispatch_latency_seconds    histogram  node, callback
//	robotexec_queue_depth                 gauge      node, callback (subscriptions)
//	robotexec_messages_dropped_total      counter    node, callback, reason
//	robotexec_timer_missed_ticks_total    counter    node, callback (timers)
//	robotexec_callback_panics_total       counter    node, callback
//	robotexec_mqtt_connected              gauge
//	robotexec_mqtt_reconnects_total       counter
//	robotexec_mqtt_broker                 gauge      broker (1 for the broker connected to)
//	robotexec_mqtt_sessions_lost_total    counter
//	robotexec_mqtt_intake_messages        gauge
//	robotexec_mqtt_outbound_messages      gauge
//
// and robotexec_mqtt_messages_received_total,
// robotexec_mqtt_messages_published_total,
// robotexec_mqtt_publish_failures_total, robotexec_mqtt_refused_total
// (label reason: the broker's MQTT 5 reason code, not_authorized,
// quota_exceeded, packet_too_large, ...), and with the embedded broker
// robotexec_broker_connections and robotexec_broker_refused_total (label
// reason: max_connections, connect_too_large, connect_timeout,
// packet_too_large, not_authorized), and with the live view
// robotexec_view_connections and robotexec_view_dropped_total (labels
// connection and remote: each viewer's messages dropped for its full send
// queue; connection "closed" sums those of the viewers gone),
// robotexec_view_channels and robotexec_view_evicted_total (topics
// unadvertised past view.max_topics), robotexec_view_refused_total (label
// reason: origin, a web page of a foreign origin; unauthorized, no valid
// credentials). The
// histograms' buckets double from 1 µs to 16.8 s. Callbacks that share a node and a callback name
// (two subscriptions of one node to the same filter) share their series.
// The series of robotexec_messages_dropped_total without node and callback
// are the MQTT client's own drops, before any subscription's queue
// (payloads over the size limit, QoS 0 messages over the client's
// backlog, each also counted on every subscription it was meant for;
// messages that matched no subscription, reason unrouted).
//
// [Handler] serves /metrics, /healthz (200 while the executor runs and
// MQTT is connected, 503 otherwise, with a JSON body saying which) and
// /debug/pprof/. [Listen] binds an address, [Server.Serve] serves the
// handler there and [Server.Shutdown] stops it.
//
// # Concurrency
//
// Collector, Handler and Server are safe for concurrent use; a scrape runs
// concurrently with the executor.
package metrics
