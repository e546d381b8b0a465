package bench

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// liveHeap returns the bytes of live heap objects after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC() // the second cycle frees what the first one's finalizers released
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// retained returns the live heap that build adds, per item: build makes n
// items and returns what keeps them alive.
func retained(n int, build func() (any, error)) (float64, error) {
	before := liveHeap()
	keep, err := build()
	if err != nil {
		return 0, err
	}
	after := liveHeap()
	runtime.KeepAlive(keep)
	return (float64(after) - float64(before)) / float64(n), nil
}

// stopped stops an executor that never ran: its timers and subscriptions
// close.
func stopped(ex *executor.Executor) error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ex.Run(ctx)
}

// SubscriptionBytes returns the live heap per idle subscription: n
// subscriptions of an in-process router with the default queue (depth
// subscribers.DefaultDepth, drop_oldest), registered on an executor, their
// topic names excluded (made beforehand).
func SubscriptionBytes(n int) (float64, error) {
	topics := make([]string, n)
	for i := range topics {
		topics[i] = fmt.Sprintf("idle/%d", i)
	}
	ex := executor.New(executor.Options{Workers: 1, Logger: discard})
	o := ex.NewOwner("idle", nil)
	bus := new(subscribers.Router)
	cb := func(ctx context.Context, _ subscribers.Message) {}
	b, err := retained(n, func() (any, error) {
		for _, t := range topics {
			if _, err := o.Subscribe(bus, t, cb); err != nil {
				return nil, err
			}
		}
		return nil, nil // the executor and the router, alive below, keep them
	})
	if err != nil {
		return 0, err
	}
	runtime.KeepAlive(bus)
	return b, stopped(ex)
}

// ChannelBytes is the baseline of SubscriptionBytes: the live heap per Go
// channel of subscriptions.Message with the same capacity, held in a slice.
func ChannelBytes(n int) float64 {
	b, _ := retained(n, func() (any, error) {
		chs := make([]chan subscribers.Message, n)
		for i := range chs {
			chs[i] = make(chan subscribers.Message, subscribers.DefaultDepth)
		}
		return chs, nil
	})
	return b
}

// TimerBytes returns the live heap per periodic timer registered on an
// executor (armed, with a period of an hour, so none fires).
func TimerBytes(n int) (float64, error) {
	ex := executor.New(executor.Options{Workers: 1, Logger: discard})
	o := ex.NewOwner("timers", nil)
	cb := func(ctx context.Context, _ timers.Event) {}
	b, err := retained(n, func() (any, error) {
		for range n {
			if _, err := o.Timer(time.Hour, cb); err != nil {
				return nil, err
			}
		}
		return nil, nil
	})
	if err != nil {
		return 0, err
	}
	return b, stopped(ex)
}

// AfterFuncBytes is the baseline of TimerBytes: the live heap per armed
// time.AfterFunc timer, held in a slice.
func AfterFuncBytes(n int) float64 {
	var ts []*time.Timer
	f := func() {}
	b, _ := retained(n, func() (any, error) {
		ts = make([]*time.Timer, n)
		for i := range ts {
			ts[i] = time.AfterFunc(time.Hour, f)
		}
		return ts, nil
	})
	for _, t := range ts {
		t.Stop()
	}
	return b
}
