package waitset_test

import (
	"context"
	"fmt"
	"time"

	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
	"github.com/robotexec/robotexec/waitset"
)

// ExampleSet plays the scheduler and one worker by hand: triggers coalesce,
// a batch puts timers first, and a trigger during a run is kept and readies
// the entity again when the run finishes.
func ExampleSet() {
	set := waitset.New(nil, nil)
	var imu, odom, tick waitset.Entity
	set.Register(&imu, waitset.Subscription)
	set.Register(&odom, waitset.Subscription)
	set.Register(&tick, waitset.Timer)
	name := map[*waitset.Entity]string{&imu: "imu", &odom: "odom", &tick: "tick"}

	fmt.Println(imu.Trigger(), odom.Trigger(), imu.Trigger(), tick.Trigger())

	var run waitset.List
	n, batch := set.Take(&run)
	fmt.Printf("batch %d: %d entities\n", batch, n)
	for e := run.Pop(); e != nil; e = run.Pop() {
		e.Start()
		if e == &imu {
			imu.Trigger() // a message arrives while imu runs
		}
		fmt.Printf("ran %s (%v), ready again: %v\n", name[e], e.Kind(), e.Finish(false))
	}

	n, batch = set.Take(&run)
	fmt.Printf("batch %d: %d entities, first %s\n", batch, n, name[run.Pop()])
	// Output:
	// true true false true
	// batch 1: 3 entities
	// ran tick (timer), ready again: false
	// ran imu (subscription), ready again: true
	// ran odom (subscription), ready again: false
	// batch 2: 1 entities, first imu
}

// Example_loop is a scheduling loop of a program's own on one goroutine:
// a timer and a subscription trigger their entities into a wait set, and
// the loop takes what is ready, timers first, and runs it.
func Example_loop() {
	wake := make(chan struct{}, 1)
	set := waitset.New(func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	}, nil)
	clock := timers.NewSim(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	tick, _ := timers.NewQueue(clock, set).NewTimer(100*time.Millisecond, false)
	sub, _ := subscribers.New("robot/cmd", subscribers.Options{Depth: 10})
	set.Register(sub.Entity(), waitset.Subscription)
	router := new(subscribers.Router)
	_ = router.Attach(sub)

	_, _ = router.Publish(context.Background(), subscribers.Message{Topic: "robot/cmd", Payload: []byte("go")})
	clock.Advance(100 * time.Millisecond) // the timer falls due
	for ran := 0; ran < 2; {
		var ready waitset.List
		if n, _ := set.Take(&ready); n == 0 {
			<-wake
			continue
		}
		for x := ready.Pop(); x != nil; x = ready.Pop() {
			x.Start()
			more := false
			switch x {
			case tick.Entity():
				if ev, ok := tick.Call(); ok {
					fmt.Println("tick, due at", ev.Expected.Format("15:04:05.000"))
				}
			case sub.Entity():
				var m subscribers.Message
				if ok, left := sub.Take(&m); ok {
					fmt.Println("message", string(m.Payload))
					more = left
				}
			}
			x.Finish(more)
			ran++
		}
	}
	// Output:
	// tick, due at 00:00:00.100
	// message go
}
