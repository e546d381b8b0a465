package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/config"
	"github.com/robotexec/robotexec/internal/facade"
	"github.com/robotexec/robotexec/internal/gcpace"
	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/internal/mqtt/broker"
	"github.com/robotexec/robotexec/internal/view"
	"github.com/robotexec/robotexec/subscribers"
)

// The view forwarding workload's traffic: ViewTopics topics, a message on
// each every ViewPeriod, watched by ViewViewers viewers.
const (
	ViewTopics  = 10
	ViewPeriod  = time.Millisecond
	ViewViewers = 2
)

// viewPayload is the traffic's payload: a JSON message of an IMU's size.
const viewPayload = `{"seq":0,"stamp":1700000000.123456,"accel":[0.012,-0.034,9.81],"gyro":[0.001,0.002,-0.003],"temp":36.5}`

// ViewCost is what one run of ViewForwarding or EchoPrinting measured,
// over the part of the run with the view (or echo) attached: a window of
// arrival times, whose messages are counted wherever they are handled.
type ViewCost struct {
	// Received counts the messages that reached the process's node in
	// the window.
	Received int64
	// Delivered counts the frames of those messages that the viewers read
	// (each message once per viewer), or the lines that echo printed of
	// the messages that reached its client in the window; after the
	// window, if need be, for as long as the reading lags behind it.
	Delivered int64
	// Added is the process's CPU time over the window, user and system,
	// minus what the same traffic cost per message received without the
	// view or echo.
	Added time.Duration
	// P99 is the 99th percentile of the time from a message's arrival to
	// its frame's reading by a viewer, or to echo's printing of it.
	P99 time.Duration
	// Elapsed is the window's length.
	Elapsed time.Duration
}

// PerMessage returns the CPU time added per message delivered, in µs.
func (c ViewCost) PerMessage() float64 {
	return micros(c.Added) / float64(max(c.Delivered, 1))
}

// Rate returns the messages received per second.
func (c ViewCost) Rate() float64 {
	return float64(c.Received) / max(c.Elapsed.Seconds(), 1e-9)
}

// viewRig is the traffic that the view forwards: an embedded broker, a
// raw paho client publishing ViewTopics JSON topics every ViewPeriod
// (QoS 0), and robotexec run's side: an MQTT client, in-process, with a
// node's subscription to every topic (an empty callback on an executor of
// workers workers), so that its router's inputs are the traffic.
type viewRig struct {
	brk     *broker.Broker
	client  *mqtt.Client
	ex      *executor.Executor
	cancel  context.CancelFunc
	exDone  chan error
	pub     *rawClient
	stop    chan struct{}
	pubDone chan struct{}
	id      string
	win     window
	node    arrivals // the messages the node received
}

// window is the span of arrival times that a measure counts, [from, to)
// in Unix nanoseconds; it is empty until opened.
type window struct{ from, to atomic.Int64 }

// arrivals counts the messages that a consumer of the traffic (the node,
// a viewer, echo) has handled: all of them, those that arrived in the
// window, and the latest arrival time handled.
type arrivals struct{ all, in, last atomic.Int64 }

// count counts in a a message that arrived at at (Unix nanoseconds).
func (w *window) count(a *arrivals, at int64) {
	if at >= w.from.Load() && at < w.to.Load() {
		a.in.Add(1)
	}
	a.all.Add(1)
	if at > a.last.Load() {
		a.last.Store(at)
	}
}

// open starts a window now, its count in each of as at zero.
func (w *window) open(as []*arrivals) time.Time {
	start := time.Now()
	w.from.Store(start.UnixNano())
	for _, a := range as {
		a.in.Store(0)
	}
	w.to.Store(math.MaxInt64)
	return start
}

// close ends the window now.
func (w *window) close() time.Time {
	end := time.Now()
	w.to.Store(end.UnixNano())
	return end
}

// handled waits until each of as has handled a message that arrived at
// end or later, so all that arrived before (each consumer takes the
// traffic in order), at most pipelineWait: a consumer that falls further
// behind counts fewer of the window's messages.
func handled(as []*arrivals, end time.Time) {
	deadline := end.Add(pipelineWait)
	for _, a := range as {
		for a.last.Load() < end.UnixNano() && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
	}
}

// viewFilter matches the traffic's topics.
const viewFilter = "bench/view/#"

func newViewRig(workers int) (r *viewRig, err error) {
	r = &viewRig{stop: make(chan struct{}), pubDone: make(chan struct{}), exDone: make(chan error, 1),
		id: fmt.Sprintf("robotexec-bench-view-%d-%d", os.Getpid(), time.Now().UnixNano())}
	r.win.from.Store(math.MaxInt64)
	defer func() {
		if err != nil {
			r.close()
		}
	}()
	if r.brk, err = broker.New(broker.Config{Listen: "127.0.0.1:0", Logger: discard}); err != nil {
		return nil, err
	}
	if r.client, err = dialBench(r.brk.URL(), r.id, mqtt.Config{InProcess: true}); err != nil {
		return nil, err
	}
	r.ex = executor.New(executor.Options{Workers: workers, Logger: discard})
	if _, err = r.ex.NewOwner("node", nil).Subscribe(r.client.Router(), viewFilter, func(ctx context.Context, m subscribers.Message) {
		r.win.count(&r.node, m.Received.UnixNano())
	}, executor.Depth(1000), executor.Overflow(subscribers.DropOldest)); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() { r.exDone <- r.ex.Run(ctx) }()
	if r.pub, err = dialRaw(r.brk.URL(), r.id+"-pub", true, pipelineWait); err != nil {
		return nil, err
	}
	go r.publish()
	return r, nil
}

// publish publishes a message on each topic every ViewPeriod, on absolute
// deadlines (catching up when late), until stop closes.
func (r *viewRig) publish() {
	defer close(r.pubDone)
	topics := make([]string, ViewTopics)
	for i := range topics {
		topics[i] = fmt.Sprintf("bench/view/imu%d/data", i)
	}
	payload := []byte(viewPayload)
	next := time.Now()
	for {
		select {
		case <-r.stop:
			return
		default:
		}
		for _, t := range topics {
			r.pub.Publish(t, 0, payload)
		}
		next = next.Add(ViewPeriod)
		if wait := time.Until(next); wait > 0 {
			time.Sleep(wait)
		}
	}
}

// measure returns the process's CPU time over a window of d, the
// messages that reached the node in it, and those of delivered's counts,
// once each has handled the window's messages (see handled). When the
// node or one of delivered counts none in d (a stalled process on a
// loaded machine), the window lasts until each does, at most
// pipelineWait more; elapsed is its length.
func (r *viewRig) measure(d time.Duration, delivered []*arrivals) (cpu, elapsed time.Duration, received, n int64, err error) {
	cpu0, ok := processCPU()
	if !ok {
		return 0, 0, 0, 0, errors.New("bench: the process's CPU time cannot be read here")
	}
	all := append([]*arrivals{&r.node}, delivered...)
	start := r.win.open(all)
	time.Sleep(d)
	for _, a := range all {
		for a.in.Load() == 0 && time.Since(start) < d+pipelineWait {
			time.Sleep(time.Millisecond)
		}
	}
	end := r.win.close()
	cpu1, _ := processCPU()
	handled(all, end)
	for _, a := range delivered {
		n += a.in.Load()
	}
	return cpu1 - cpu0, end.Sub(start), r.node.in.Load(), n, nil
}

// close stops the traffic, the node and the broker.
func (r *viewRig) close() {
	if r.pub != nil {
		close(r.stop)
		<-r.pubDone
		r.pub.Close()
	}
	if r.cancel != nil {
		r.cancel()
		<-r.exDone
	}
	if r.client != nil {
		r.client.Close()
	}
	if r.brk != nil {
		r.brk.Close()
	}
}

// attached is what a run attaches to the rig: the counts of the messages
// it has delivered (one per viewer, or echo's), and how to detach it.
type attached struct {
	delivered []*arrivals
	detach    func()
}

// runAttached measures the rig for d/2 as it is, then attaches what attach
// makes and measures it again for d/2, recording latencies in h from then
// on; the CPU time of the second half beyond the first's per message
// received is what was attached costs. The whole run keeps robotexec
// run's default GC headroom (executor.gc_headroom), as the process it
// stands for does.
func runAttached(workers int, d time.Duration, h *Histogram, attach func(*viewRig) (attached, error)) (ViewCost, error) {
	defer gcpace.Start(int64(config.DefaultGCHeadroom)).Stop()
	r, err := newViewRig(workers)
	if err != nil {
		return ViewCost{}, err
	}
	defer r.close()
	warm := min(max(d/10, 20*time.Millisecond), 200*time.Millisecond)
	time.Sleep(warm)
	baseCPU, _, baseN, _, err := r.measure(d/2, nil)
	if err != nil {
		return ViewCost{}, err
	}
	if baseN == 0 {
		return ViewCost{}, errors.New("bench: view forwarding: the node received no traffic")
	}
	a, err := attach(r)
	if err != nil {
		return ViewCost{}, err
	}
	defer a.detach()
	if err := awaitDelivery(a.delivered); err != nil {
		return ViewCost{}, err
	}
	time.Sleep(warm)
	h.Reset()
	cpu, elapsed, n, delivered, err := r.measure(d/2, a.delivered)
	if err != nil {
		return ViewCost{}, err
	}
	if delivered == 0 {
		return ViewCost{}, errors.New("bench: view forwarding: nothing was delivered")
	}
	perBase := float64(baseCPU) / float64(baseN)
	return ViewCost{Received: n, Delivered: delivered, Added: cpu - time.Duration(perBase*float64(n)),
		P99: h.Percentile(0.99), Elapsed: elapsed}, nil
}

// awaitDelivery waits until each of delivered counts a message (the
// viewers have subscribed, or echo's client), at most pipelineWait.
func awaitDelivery(delivered []*arrivals) error {
	deadline := time.Now().Add(pipelineWait)
	for _, a := range delivered {
		for a.all.Load() == 0 {
			if time.Now().After(deadline) {
				return fmt.Errorf("bench: view forwarding: nothing delivered in %v", pipelineWait)
			}
			time.Sleep(time.Millisecond)
		}
	}
	return nil
}

// ViewForwarding measures the live view forwarding the traffic of
// ViewTopics topics at one message each per ViewPeriod to ViewViewers
// viewers subscribed to every topic, as robotexec run does with
// view.listen: the router's inputs are observed by the view server
// (bus.TapInputs), and each viewer is a WebSocket client in the
// process. The run takes about d; its cost includes the viewers' reading.
func ViewForwarding(workers int, d time.Duration) (ViewCost, error) {
	h := NewHistogram(ViewViewers)
	return runAttached(workers, d, h, func(r *viewRig) (attached, error) {
		s, err := view.Listen(view.Options{Listen: "127.0.0.1:0", Anonymous: true, Logger: discard})
		if err != nil {
			return attached{}, err
		}
		router := r.client.Router()
		bus.TapInputs(facade.Router(router), func(m *bus.Message) { s.Observe(m.Topic, m.Payload, m.Received) })
		var vs []*viewer
		detach := func() {
			bus.TapInputs(facade.Router(router), nil)
			for _, v := range vs {
				v.close()
			}
			s.Close()
		}
		for i := range ViewViewers {
			v, err := dialViewer(s.Addr().String(), ViewTopics, h, i, &r.win)
			if err != nil {
				detach()
				return attached{}, err
			}
			vs = append(vs, v)
		}
		delivered := make([]*arrivals, len(vs))
		for i, v := range vs {
			delivered[i] = &v.got
		}
		return attached{detach: detach, delivered: delivered}, nil
	})
}

// EchoPrinting measures robotexec echo's way with the same traffic: a
// client of its own (QoS 0, clean session, no status topic), an executor
// of one worker, a subscription of depth 1000 with the block policy, and
// each message formatted as "TOPIC PAYLOAD\n" and written, here to
// io.Discard. The latency is from its client's arrival to the write's end.
func EchoPrinting(workers int, d time.Duration) (ViewCost, error) {
	h := NewHistogram(1)
	return runAttached(workers, d, h, func(r *viewRig) (attached, error) {
		c, err := mqtt.Dial(mqtt.Config{Broker: r.brk.URL(), ClientID: r.id + "-echo", CleanSession: true, StatusTopic: "-", Logger: discard})
		if err != nil {
			return attached{}, err
		}
		ctx, cancel := context.WithTimeout(context.Background(), pipelineWait)
		defer cancel()
		if err := c.WaitConnected(ctx); err != nil {
			c.Close()
			return attached{}, err
		}
		ex := executor.New(executor.Options{Workers: 1, Logger: discard})
		printed := new(arrivals)
		var out strings.Builder
		_, err = ex.NewOwner("echo", nil).Subscribe(c, viewFilter, func(ctx context.Context, m subscribers.Message) {
			out.Reset()
			out.WriteString(m.Topic)
			out.WriteByte(' ')
			out.Write(m.Payload)
			out.WriteByte('\n')
			io.WriteString(io.Discard, out.String())
			h.Record(0, time.Since(m.Received))
			r.win.count(printed, m.Received.UnixNano())
		}, executor.Depth(1000), executor.Overflow(subscribers.Block))
		if err != nil {
			c.Close()
			return attached{}, err
		}
		runCtx, stop := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- ex.Run(runCtx) }()
		return attached{delivered: []*arrivals{printed}, detach: func() {
			stop()
			<-done
			c.Close()
		}}, nil
	})
}
