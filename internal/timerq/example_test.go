package timerq_test

import (
	"fmt"
	"time"

	"github.com/robotexec/robotexec/internal/timerq"
	"github.com/robotexec/robotexec/waitset"
)

// ExampleQueue runs a 100ms timer on a simulated clock, playing the
// scheduler by hand: take what is ready from the wait set, start it, call
// the timer, finish. A call that comes late skips the deadlines that passed
// and counts them, so the timer never fires a burst and stays on its grid.
func ExampleQueue() {
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := timerq.NewSim(start)
	set := waitset.New(nil, nil)
	q := timerq.NewQueue(clock, set)
	tick, err := q.NewTimer(100*time.Millisecond, false)
	if err != nil {
		panic(err)
	}
	tick.Reset()

	spin := func() {
		var run waitset.List
		set.Take(&run)
		for x := run.Pop(); x != nil; x = run.Pop() {
			x.Start()
			if ev, ok := timerq.Call(tick); ok {
				fmt.Printf("expected %v, ran at %v, missed %d\n",
					ev.Expected.Sub(start), ev.Actual.Sub(start), ev.Missed)
			}
			x.Finish(false)
		}
	}

	clock.Advance(100 * time.Millisecond)
	spin()
	clock.Advance(100 * time.Millisecond)
	spin()
	clock.Advance(350 * time.Millisecond) // due at 300ms, run at 550ms
	spin()
	clock.Advance(50 * time.Millisecond)
	spin()
	next, _ := tick.Deadline()
	fmt.Printf("calls %d, missed %d, next %v\n", tick.Calls(), tick.Missed(), next.Sub(start))
	// Output:
	// expected 100ms, ran at 100ms, missed 0
	// expected 200ms, ran at 200ms, missed 0
	// expected 300ms, ran at 550ms, missed 2
	// expected 600ms, ran at 600ms, missed 0
	// calls 4, missed 2, next 700ms
}

// ExampleTimer_Reset shows a one-shot timer: it fires once, and Reset arms it
// again from now.
func ExampleTimer_Reset() {
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := timerq.NewSim(start)
	set := waitset.New(nil, nil)
	q := timerq.NewQueue(clock, set)
	once, _ := q.NewTimer(time.Second, true)
	once.Reset()

	run := func() {
		var l waitset.List
		set.Take(&l)
		for x := l.Pop(); x != nil; x = l.Pop() {
			x.Start()
			if ev, ok := timerq.Call(once); ok {
				fmt.Printf("due at %v, ran at %v\n", ev.Expected.Sub(start), ev.Actual.Sub(start))
			}
			x.Finish(false)
		}
	}
	clock.Advance(5 * time.Second)
	run()
	clock.Advance(5 * time.Second)
	run()
	once.Reset()
	clock.Advance(5 * time.Second)
	run()
	fmt.Println("canceled:", once.Canceled())
	// Output:
	// due at 1s, ran at 5s
	// due at 11s, ran at 15s
	// canceled: true
}
