package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/robotexec/robotexec/config"
	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/bus"
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
// over the part of the run with the view (or echo) attached.
type ViewCost struct {
	// Received counts the messages the process's node received.
	Received int64
	// Delivered counts the frames the viewers read (each message once
	// per viewer), or the lines echo printed.
	Delivered int64
	// Added is the process's CPU time, user and system, minus what the
	// same traffic cost per message received without the view or echo.
	Added time.Duration
	// P99 is the 99th percentile of the time from a message's arrival to
	// its frame's reading by a viewer, or to echo's printing of it.
	P99 time.Duration
	// Elapsed is the time measured.
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
	got     atomic.Int64 // messages the node received
}

// viewFilter matches the traffic's topics.
const viewFilter = "bench/view/#"

func newViewRig(workers int) (r *viewRig, err error) {
	r = &viewRig{stop: make(chan struct{}), pubDone: make(chan struct{}), exDone: make(chan error, 1),
		id: fmt.Sprintf("robotexec-bench-view-%d-%d", os.Getpid(), time.Now().UnixNano())}
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
	if _, err = r.ex.NewOwner("node", nil).Subscribe(r.client.Router(), viewFilter, func(subscribers.Message) {
		r.got.Add(1)
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

// measure returns the process's CPU time and the messages the node
// received over d, and what delivered counted meanwhile. When delivered
// counts nothing in d (a stalled process on a loaded machine), the window
// lasts until it does, at most pipelineWait more; elapsed is its length.
func (r *viewRig) measure(d time.Duration, delivered func() int64) (cpu, elapsed time.Duration, received, n int64, err error) {
	cpu0, ok := processCPU()
	if !ok {
		return 0, 0, 0, 0, errors.New("bench: the process's CPU time cannot be read here")
	}
	start := time.Now()
	got0, del0 := r.got.Load(), delivered()
	time.Sleep(d)
	for delivered() == del0 && time.Since(start) < d+pipelineWait {
		time.Sleep(time.Millisecond)
	}
	cpu1, _ := processCPU()
	return cpu1 - cpu0, time.Since(start), r.got.Load() - got0, delivered() - del0, nil
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

// attached is what a run attaches to the rig: how many messages it has
// delivered, and how to detach it.
type attached struct {
	delivered func() int64
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
	baseCPU, _, baseN, _, err := r.measure(d/2, r.got.Load)
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

// awaitDelivery waits until delivered counts a message: the viewers have
// subscribed, or echo's client, at most pipelineWait.
func awaitDelivery(delivered func() int64) error {
	deadline := time.Now().Add(pipelineWait)
	for delivered() == 0 {
		if time.Now().After(deadline) {
			return fmt.Errorf("bench: view forwarding: nothing delivered in %v", pipelineWait)
		}
		time.Sleep(time.Millisecond)
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
		bus.TapInputs(router, func(m *subscribers.Message) { s.Observe(m.Topic, m.Payload, m.Received) })
		var vs []*viewer
		detach := func() {
			bus.TapInputs(router, nil)
			for _, v := range vs {
				v.close()
			}
			s.Close()
		}
		for i := range ViewViewers {
			v, err := dialViewer(s.Addr().String(), ViewTopics, h, i)
			if err != nil {
				detach()
				return attached{}, err
			}
			vs = append(vs, v)
		}
		return attached{detach: detach, delivered: func() int64 {
			var n int64
			for _, v := range vs {
				n += v.got.Load()
			}
			return n
		}}, nil
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
		var printed atomic.Int64
		var out strings.Builder
		_, err = ex.NewOwner("echo", nil).Subscribe(c, viewFilter, func(m subscribers.Message) {
			out.Reset()
			out.WriteString(m.Topic)
			out.WriteByte(' ')
			out.Write(m.Payload)
			out.WriteByte('\n')
			io.WriteString(io.Discard, out.String())
			h.Record(0, time.Since(m.Received))
			printed.Add(1)
		}, executor.Depth(1000), executor.Overflow(subscribers.Block))
		if err != nil {
			c.Close()
			return attached{}, err
		}
		runCtx, stop := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- ex.Run(runCtx) }()
		return attached{delivered: printed.Load, detach: func() {
			stop()
			<-done
			c.Close()
		}}, nil
	})
}
