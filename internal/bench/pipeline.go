package bench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/internal/mqtt/broker"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

const (
	// PipelineStages is the number of stages between the pipeline's
	// source and its sink.
	PipelineStages = 5
	// PipelinePeriod is how often the source publishes.
	PipelinePeriod = time.Millisecond
	// pipelineWait bounds the waits for the broker.
	pipelineWait = 10 * time.Second
)

// stamp is the payload of the pipeline's messages: the monotonic time of
// the source's publication, since base.
func stamp(base time.Time) []byte {
	return binary.LittleEndian.AppendUint64(make([]byte, 0, 8), uint64(time.Since(base)))
}

func sinceStamp(base time.Time, p []byte) time.Duration {
	if len(p) < 8 {
		return 0
	}
	return time.Since(base) - time.Duration(binary.LittleEndian.Uint64(p))
}

// PipelineExecutor measures the pipeline workload for d: a timer on the
// default clock publishes every PipelinePeriod on p/0; PipelineStages
// stages each pass what they get on p/i to p/i+1; a sink on p/5 records
// the time since the source's publication. Each is an executor owner
// (its own mutually exclusive group) publishing through the router of an
// MQTT client of the embedded broker, in-process (executor.in_process,
// the default of robotexec run), as nodes do: every hop goes straight into
// the next queue, and to the broker when another client subscribes to it
// (none does here).
func PipelineExecutor(workers int, d time.Duration) (Latency, error) {
	brk, err := broker.New(broker.Config{Listen: "127.0.0.1:0", Logger: discard})
	if err != nil {
		return Latency{}, err
	}
	defer brk.Close()
	c, err := dialBench(brk.URL(), pipelineClient, mqtt.Config{InProcess: true, Audience: brk.AudienceOf(pipelineClient)})
	if err != nil {
		return Latency{}, err
	}
	defer c.Close()
	clock, _ := defaultClock()
	ex := executor.New(executor.Options{Workers: workers, Logger: discard, Clock: clock})
	h := NewHistogram(1)
	base := time.Now()
	r := c.Router()
	for i := 1; i <= PipelineStages+1; i++ {
		o := ex.NewOwner(fmt.Sprint("stage", i), nil)
		var cb func(ctx context.Context, _ subscribers.Message)
		if i <= PipelineStages {
			out, err := c.Publisher(fmt.Sprint("p/", i), bus.WithQoS(1))
			if err != nil {
				return Latency{}, err
			}
			cb = func(ctx context.Context, m subscribers.Message) { _ = out.Publish(ctx, m.Payload) }
		} else {
			cb = func(ctx context.Context, m subscribers.Message) { h.Record(0, sinceStamp(base, m.Payload)) }
		}
		if _, err := o.Subscribe(r, fmt.Sprint("p/", i-1), cb, executor.Depth(100), executor.Overflow(subscribers.Block)); err != nil {
			return Latency{}, err
		}
	}
	src := ex.NewOwner("source", nil)
	first, err := c.Publisher("p/0", bus.WithQoS(1))
	if err != nil {
		return Latency{}, err
	}
	sent := 0
	if _, err := src.Timer(PipelinePeriod, func(ctx context.Context, _ timers.Event) {
		sent++
		_ = first.Publish(ctx, stamp(base))
	}); err != nil {
		return Latency{}, err
	}
	return runFor(ex, h, d, &sent)
}

// pipelineClient is the client ID of the pipeline's MQTT client.
var pipelineClient = fmt.Sprintf("robotexec-bench-pipeline-%d", os.Getpid())

// dialBench dials a clean-session client without a status topic and waits
// until it is connected.
func dialBench(url, id string, cfg mqtt.Config) (*mqtt.Client, error) {
	cfg.Broker, cfg.ClientID, cfg.QoS, cfg.CleanSession, cfg.StatusTopic, cfg.Logger = url, id, 1, true, "-", discard
	c, err := mqtt.Dial(cfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), pipelineWait)
	defer cancel()
	if err := c.WaitConnected(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// runFor runs ex for d and returns the latencies recorded in h meanwhile;
// *sent counts the source's publications, read once ex has stopped.
func runFor(ex *executor.Executor, h *Histogram, d time.Duration, sent *int) (Latency, error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- ex.Run(ctx) }()
	time.Sleep(d)
	cancel()
	if err := <-done; err != nil {
		return Latency{}, err
	}
	if *sent == 0 {
		return Latency{}, errors.New("bench: the source published nothing")
	}
	return latencyOf(h, *sent, time.Since(start)), nil
}

// PipelineChanChain is PipelineExecutor's baseline: a goroutine that sends
// every PipelinePeriod (a time.Ticker) to a chain of PipelineStages
// goroutines linked by channels of capacity 16, passing the same message
// on, to a sink goroutine that records the time since the send.
func PipelineChanChain(d time.Duration) Latency {
	h := NewHistogram(1)
	base := time.Now()
	chans := make([]chan []byte, PipelineStages+1)
	for i := range chans {
		chans[i] = make(chan []byte, 16)
	}
	for i := range PipelineStages {
		go func() {
			for p := range chans[i] {
				chans[i+1] <- p
			}
			close(chans[i+1])
		}()
	}
	done := make(chan struct{})
	go func() {
		for p := range chans[PipelineStages] {
			h.Record(0, sinceStamp(base, p))
		}
		close(done)
	}()
	tick := time.NewTicker(PipelinePeriod)
	start := time.Now()
	sent := 0
	for time.Since(start) < d {
		<-tick.C
		sent++
		chans[0] <- stamp(base)
	}
	tick.Stop()
	close(chans[0])
	<-done
	return latencyOf(h, sent, time.Since(start))
}

// BrokerHop measures one hop through the embedded broker between two
// MQTT clients with executors of their own, as between two robotexec
// processes: a timer of one publishes every PipelinePeriod, a subscription
// of the other records the time since the publication.
func BrokerHop(workers int, d time.Duration) (Latency, error) {
	brk, err := broker.New(broker.Config{Listen: "127.0.0.1:0", Logger: discard})
	if err != nil {
		return Latency{}, err
	}
	defer brk.Close()
	id := fmt.Sprintf("robotexec-bench-hop-%d", os.Getpid())
	pc, err := dialBench(brk.URL(), id+"-a", mqtt.Config{InProcess: true})
	if err != nil {
		return Latency{}, err
	}
	defer pc.Close()
	sc, err := dialBench(brk.URL(), id+"-b", mqtt.Config{InProcess: true})
	if err != nil {
		return Latency{}, err
	}
	defer sc.Close()
	h := NewHistogram(1)
	base := time.Now()
	subEx := executor.New(executor.Options{Workers: workers, Logger: discard})
	if _, err := subEx.NewOwner("sink", nil).Subscribe(sc.Router(), "hop", func(ctx context.Context, m subscribers.Message) {
		h.Record(0, sinceStamp(base, m.Payload))
	}, executor.Depth(100), executor.Overflow(subscribers.Block)); err != nil {
		return Latency{}, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	subDone := make(chan error, 1)
	go func() { subDone <- subEx.Run(ctx) }()
	defer func() {
		cancel()
		<-subDone
	}()
	clock, _ := defaultClock()
	pubEx := executor.New(executor.Options{Workers: workers, Logger: discard, Clock: clock})
	o := pubEx.NewOwner("source", nil)
	out, err := pc.Publisher("hop", bus.WithQoS(1))
	if err != nil {
		return Latency{}, err
	}
	sent := 0
	if _, err := o.Timer(PipelinePeriod, func(ctx context.Context, _ timers.Event) {
		sent++
		_ = out.Publish(ctx, stamp(base))
	}); err != nil {
		return Latency{}, err
	}
	return runFor(pubEx, h, d, &sent)
}
