package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/subscribers"
)

// costRig is executor/bench_test.go's BenchmarkPerEventCost workload: a
// running executor with idle subscriptions of depth 1 that never receive a
// message, and one busy subscription (depth 256, Block) that a producer
// publishes to. A round publishes n messages and waits until the busy
// callback has run them all.
type costRig struct {
	ex     *executor.Executor
	pub    *subscribers.Publisher
	cancel context.CancelFunc
	done   chan error

	// ran and end are the busy callback's: it runs on one goroutine at a
	// time, and end is set before the round's first publication.
	ran, end int
	roundC   chan struct{}
}

func newCostRig(workers, idle int) (*costRig, error) {
	ex := executor.New(executor.Options{Workers: workers, Logger: discard})
	o := ex.NewOwner("bench", ex.NewGroup("bench", executor.Reentrant))
	bus := new(subscribers.Router)
	for i := range idle {
		if _, err := o.Subscribe(bus, fmt.Sprintf("idle/%d", i), func(ctx context.Context, _ subscribers.Message) {}, executor.Depth(1)); err != nil {
			return nil, err
		}
	}
	r := &costRig{ex: ex, roundC: make(chan struct{}, 1)}
	if _, err := o.Subscribe(bus, "busy", func(ctx context.Context, _ subscribers.Message) {
		if r.ran++; r.ran == r.end {
			r.roundC <- struct{}{}
		}
	}, executor.Depth(256), executor.Overflow(subscribers.Block)); err != nil {
		return nil, err
	}
	r.pub, _ = bus.Publisher("busy")
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel, r.done = cancel, make(chan error, 1)
	go func() { r.done <- ex.Run(ctx) }()
	return r, nil
}

// round publishes n messages and returns the time until the last one's
// callback ran.
func (r *costRig) round(n int) time.Duration {
	// The callback reads end only after the first publication below,
	// which orders this write before it; it is done with the previous
	// round's end, whose last callback has signalled.
	r.end += n
	m := subscribers.Message{Payload: []byte("x"), Received: time.Unix(1, 0)}
	start := time.Now()
	for range n {
		r.pub.PublishMessage(context.Background(), m)
	}
	<-r.roundC
	return time.Since(start)
}

func (r *costRig) close() error {
	r.cancel()
	return <-r.done
}
