package executor_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/subscribers"
)

// BenchmarkDispatch measures empty callbacks through the executor beside the
// baseline: N goroutines receiving func() values from one shared buffered
// channel (capacity 1024) and calling them. Both include starting the pool
// and waiting for it to finish every callback. In "executor", the producer
// hands messages to 4·N subscriptions (Block policy, depth 256) directly, as
// the channel's sender hands closures to the channel: what is measured is
// the executor's dispatch. "executor+bus" publishes through the in-process
// bus instead, which adds the topic routing and the message's time stamp
// (a clock read, 25-40 ns on this machine).
func BenchmarkDispatch(b *testing.B) {
	for _, workers := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("executor/workers=%d", workers), func(b *testing.B) {
			benchExecutor(b, workers, false)
		})
		b.Run(fmt.Sprintf("executor+bus/workers=%d", workers), func(b *testing.B) {
			benchExecutor(b, workers, true)
		})
		b.Run(fmt.Sprintf("chanpool/workers=%d", workers), func(b *testing.B) {
			benchChanPool(b, workers)
		})
	}
}

func benchChanPool(b *testing.B, workers int) {
	b.ReportAllocs()
	ch := make(chan func(), 1024)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for f := range ch {
				f()
			}
		}()
	}
	f := func() {}
	b.ResetTimer()
	for range b.N {
		ch <- f
	}
	close(ch)
	wg.Wait()
}

func benchExecutor(b *testing.B, workers int, viaBus bool) {
	b.ReportAllocs()
	ex := executor.New(executor.Options{Workers: workers})
	o := ex.NewOwner("bench", ex.NewGroup("bench", executor.Reentrant))
	bus := new(subscribers.Router)
	nsubs := 4 * workers
	pubs := make([]*subscribers.Publisher, nsubs)
	subs := make([]*subscribers.Subscription, nsubs)
	for i := range pubs {
		topic := fmt.Sprintf("bench/%d", i)
		s, err := o.Subscribe(bus, topic, func(ctx context.Context, _ subscribers.Message) {},
			executor.Depth(256), executor.Overflow(subscribers.Block))
		if err != nil {
			b.Fatal(err)
		}
		subs[i] = s
		pubs[i], _ = bus.Publisher(topic)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ex.Run(ctx) }()
	m := subscribers.Message{Payload: []byte("x")}
	b.ResetTimer()
	if viaBus {
		for i := range b.N {
			pubs[i%nsubs].PublishMessage(ctx, m)
		}
	} else {
		for i := range b.N {
			subs[i%nsubs].Deliver(m)
		}
	}
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	st := ex.Stats()
	if st.Runs != uint64(b.N) {
		b.Fatalf("ran %d callbacks, want %d", st.Runs, b.N)
	}
	b.ReportMetric(float64(st.Wakeups)/float64(b.N), "wakeups/op")
}

// BenchmarkPerEventCost measures the cost of one event through one busy
// subscription while 10 or 100,000 idle subscriptions are registered. The
// wait set never scans idle entities, so the two must cost the same.
func BenchmarkPerEventCost(b *testing.B) {
	for _, idle := range []int{10, 100_000} {
		b.Run(fmt.Sprintf("idle=%d", idle), func(b *testing.B) {
			b.ReportAllocs()
			ex := executor.New(executor.Options{Workers: 2})
			o := ex.NewOwner("bench", ex.NewGroup("bench", executor.Reentrant))
			bus := new(subscribers.Router)
			for i := range idle {
				if _, err := o.Subscribe(bus, fmt.Sprintf("idle/%d", i), func(ctx context.Context, _ subscribers.Message) {}, executor.Depth(1)); err != nil {
					b.Fatal(err)
				}
			}
			// One subscription's callbacks never overlap, so the count
			// needs no atomic.
			ran, all := 0, make(chan struct{})
			if _, err := o.Subscribe(bus, "busy", func(ctx context.Context, _ subscribers.Message) {
				if ran++; ran == b.N {
					close(all)
				}
			}, executor.Depth(256), executor.Overflow(subscribers.Block)); err != nil {
				b.Fatal(err)
			}
			pub, _ := bus.Publisher("busy")
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- ex.Run(ctx) }()
			m := subscribers.Message{Payload: []byte("x"), Received: time.Unix(1, 0)}
			b.ResetTimer()
			for range b.N {
				pub.PublishMessage(ctx, m)
			}
			<-all
			b.StopTimer()
			cancel()
			if err := <-done; err != nil {
				b.Fatal(err)
			}
		})
	}
}
