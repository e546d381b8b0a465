package waitset_test

import (
	"fmt"

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
	fmt.Printf("batch %d: %d entities, first %s\n", batch, n, name[run.Front()])
	// Output:
	// true true false true
	// batch 1: 3 entities
	// ran tick (timer), ready again: false
	// ran imu (subscription), ready again: true
	// ran odom (subscription), ready again: false
	// batch 2: 1 entities, first imu
}
