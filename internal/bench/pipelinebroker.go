package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// PipelineCost is what one run of PipelineViaBroker cost.
type PipelineCost struct {
	// Messages is the number of pipeline messages the source published;
	// each reached the sink and the outside subscriber exactly once.
	Messages int
	// CPU is the process's CPU time, user and system, over the run: the
	// pipeline's, its MQTT client's and the outside subscriber's.
	CPU time.Duration
	// BrokerSent is the number of messages the broker sent the pipeline's
	// MQTT client over the run: the change of Stats().Received.
	BrokerSent uint64
}

// CPUPerMessage returns the CPU time per pipeline message, in µs.
func (c PipelineCost) CPUPerMessage() float64 {
	return micros(c.CPU) / float64(max(c.Messages, 1))
}

// BrokerSentPerMessage returns the messages the broker sent the
// pipeline's client per pipeline message.
func (c PipelineCost) BrokerSentPerMessage() float64 {
	return float64(c.BrokerSent) / float64(max(c.Messages, 1))
}

// pipeRounds numbers the runs of PipelineViaBroker, for their client IDs
// and topics.
var pipeRounds atomic.Int64

// pipeRig is one run of PipelineViaBroker.
type pipeRig struct {
	name    string // "in_process true" or "false", for errors
	client  *mqtt.Client
	ex      *executor.Executor
	outside *rawClient
	prefix  string // of the pipeline's topics, prefix+"0" to prefix+"5"
	sink    *tally // what the pipeline's sink got
	seen    *tally // what the outside subscriber got on the last topic

	// final is the number of messages the source published, set before
	// srcDone closes.
	final   int
	srcDone chan struct{}
	// cpu and received are the process's CPU time and the client's
	// Stats().Received when the end marker reached the first stage, set
	// before marked closes.
	cpu      time.Duration
	received uint64
	marked   chan struct{}
}

// PipelineViaBroker runs PipelineExecutor's pipeline through the broker at
// url (a tcp:// URL) for about d: the source's timer publishes a sequence
// number every PipelinePeriod on the first topic; PipelineStages stages
// pass it on; a sink counts what reaches the last topic. Each is an
// executor owner of workers workers publishing through the router of one
// MQTT client (QoS 1, clean session), in-process when inProcess is true
// (robotexec run's default), else every hop through the broker. An outside
// subscriber, a raw paho client, counts what the broker sends it from the
// last topic. When the source has stopped, the outside subscriber
// publishes an end marker on the first topic, which travels the whole
// pipeline. The run's cost is measured from the start to the marker's
// arrival at the first stage: the broker sent the client its copies of the
// pipeline's messages before the marker (see drive), and the stages have
// published nothing for the marker yet. PipelineViaBroker returns the
// cost, or an error when the sink or the outside subscriber missed a
// message or got one twice.
func PipelineViaBroker(url string, workers int, inProcess bool, d time.Duration) (PipelineCost, error) {
	r, err := newPipeRig(url, workers, inProcess, d)
	if err != nil {
		return PipelineCost{}, err
	}
	defer r.close()
	cpu0, ok := processCPU()
	if !ok {
		return PipelineCost{}, errors.New("bench: the process's CPU time cannot be read here")
	}
	got0 := r.client.Stats().Received
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.ex.Run(ctx) }()
	err = r.drive(d)
	cancel()
	if rerr := <-done; err == nil {
		err = rerr
	}
	if err != nil {
		return PipelineCost{}, err
	}
	if err := r.once(); err != nil {
		return PipelineCost{}, err
	}
	// The marker is the outside subscriber's message, not the pipeline's.
	return PipelineCost{Messages: r.final, CPU: r.cpu - cpu0, BrokerSent: r.received - got0 - 1}, nil
}

// newPipeRig connects the pipeline's client and the outside subscriber
// and builds the pipeline on an executor that is not running yet.
func newPipeRig(url string, workers int, inProcess bool, d time.Duration) (_ *pipeRig, err error) {
	n := pipeRounds.Add(1)
	id := fmt.Sprintf("robotexec-bench-pipe-%d-%d", os.Getpid(), n)
	r := &pipeRig{name: fmt.Sprint("in_process ", inProcess), prefix: fmt.Sprintf("bench/pipe/%d/%d/", os.Getpid(), n),
		sink: newTally(), seen: newTally(), srcDone: make(chan struct{}), marked: make(chan struct{})}
	defer func() {
		if err != nil {
			if r.ex != nil {
				// Run on an ended context stops the timers made so far.
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				_ = r.ex.Run(ctx)
			}
			r.close()
		}
	}()
	if r.client, err = dialBench(url, id, mqtt.Config{InProcess: inProcess}); err != nil {
		return nil, err
	}
	if r.outside, err = dialRaw(url, id+"-outside", true, pipelineWait); err != nil {
		return nil, err
	}
	if err = r.outside.Subscribe(r.topic(PipelineStages), 1, func(_ string, p []byte) { r.seen.add(p) }); err != nil {
		return nil, err
	}
	clock, _ := defaultClock()
	r.ex = executor.New(executor.Options{Workers: workers, Logger: discard, Clock: clock})
	if err = r.stages(); err != nil {
		return nil, err
	}
	if err = r.source(d); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *pipeRig) topic(i int) string { return fmt.Sprint(r.prefix, i) }

// stages builds the stages and the sink, as PipelineExecutor does.
func (r *pipeRig) stages() error {
	router := r.client.Router()
	for i := 1; i <= PipelineStages+1; i++ {
		o := r.ex.NewOwner(fmt.Sprint("stage", i), nil)
		cb := func(ctx context.Context, m subscribers.Message) { r.sink.add(m.Payload) }
		if i <= PipelineStages {
			out, err := r.client.Publisher(r.topic(i), bus.WithQoS(1))
			if err != nil {
				return err
			}
			cb = func(ctx context.Context, m subscribers.Message) { _ = out.Publish(ctx, m.Payload) }
		}
		if i == 1 {
			pass := cb
			cb = func(ctx context.Context, m subscribers.Message) {
				if isMarker(m.Payload) {
					r.mark()
				}
				pass(ctx, m)
			}
		}
		if _, err := o.Subscribe(router, r.topic(i-1), cb, executor.Depth(100), executor.Overflow(subscribers.Block)); err != nil {
			return err
		}
	}
	return nil
}

// mark records the cost so far, once: the first stage calls it for the
// end marker.
func (r *pipeRig) mark() {
	select {
	case <-r.marked:
		return // the marker again (a copy from the broker)
	default:
	}
	r.cpu, _ = processCPU()
	r.received = r.client.Stats().Received
	close(r.marked)
}

// source starts the source's timer: it publishes sequence numbers from 0
// for d from its first call, then cancels itself, sets r.final and closes
// r.srcDone.
func (r *pipeRig) source(d time.Duration) error {
	o := r.ex.NewOwner("source", nil)
	first, err := r.client.Publisher(r.topic(0), bus.WithQoS(1))
	if err != nil {
		return err
	}
	var (
		tm    *timers.Timer
		start time.Time
		seq   uint64
		ended bool
	)
	tm, err = o.Timer(PipelinePeriod, func(ctx context.Context, _ timers.Event) {
		switch {
		case ended:
		case seq > 0 && time.Since(start) >= d:
			ended = true
			tm.Cancel()
			r.final = int(seq)
			close(r.srcDone)
		default:
			if seq == 0 {
				start = time.Now()
			}
			_ = first.Publish(ctx, seqPayload(seq))
			seq++
		}
	})
	return err
}

// drive waits for the source to stop and for every message at the sink
// and the outside subscriber, then sends the end marker through the
// pipeline and waits for it at both.
func (r *pipeRig) drive(d time.Duration) error {
	select {
	case <-r.srcDone:
	case <-time.After(d + pipelineWait):
		return fmt.Errorf("bench: pipeline via broker (%s): the source did not stop", r.name)
	}
	r.sink.expect(r.final)
	r.seen.expect(r.final)
	if err := r.await("lost messages", r.sink.all, r.seen.all); err != nil {
		return err
	}
	// The marker is published after the broker sent the outside
	// subscriber every message of the last topic: the broker sends the
	// pipeline's client its copies of the pipeline's publications
	// before the marker, and the stages take each queue in order, so a
	// copy delivered twice reaches the sink and the outside subscriber
	// before the marker does.
	r.outside.Publish(r.topic(0), 1, seqPayload(pipeMarker))
	return r.await("the end marker did not arrive", r.marked, r.sink.end, r.seen.end)
}

// await waits for the channels to close, at most pipelineWait in all.
func (r *pipeRig) await(what string, chs ...chan struct{}) error {
	limit := time.NewTimer(pipelineWait)
	defer limit.Stop()
	for _, ch := range chs {
		select {
		case <-ch:
		case <-limit.C:
			return r.failure(what)
		}
	}
	return nil
}

// once returns an error when the sink or the outside subscriber got a
// message twice, or a stray payload.
func (r *pipeRig) once() error {
	_, sinkDups, sinkStray := r.sink.counts()
	_, seenDups, seenStray := r.seen.counts()
	if sinkDups+sinkStray+seenDups+seenStray > 0 {
		return r.failure("messages delivered twice")
	}
	return nil
}

// failure describes what the sink and the outside subscriber got.
func (r *pipeRig) failure(what string) error {
	sg, sd, ss := r.sink.counts()
	og, od, ost := r.seen.counts()
	return fmt.Errorf("bench: pipeline via broker (%s): %s: of %d pipeline messages, the sink got %d (%d twice, %d stray), the outside subscriber %d (%d twice, %d stray)",
		r.name, what, r.final, sg, sd, ss, og, od, ost)
}

// close stops the clients; the executor is not running.
func (r *pipeRig) close() {
	if r.outside != nil {
		r.outside.Close()
	}
	if r.client != nil {
		r.client.Close()
	}
}
