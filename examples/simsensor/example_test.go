package simsensor_test

import (
	"fmt"
	"time"

	"github.com/robotexec/robotexec/examples/simsensor"
	"github.com/robotexec/robotexec/nodes/nodetest"
)

// A simulated odometry without noise, on a simulated clock: each tick
// turns the robot by turn/rate and moves it by speed/rate along its new
// heading, stamped with the tick's deadline.
func ExampleNewOdom() {
	r := nodetest.New(nil)
	r.MustBuild("odom", "sim_odom", "{ topic: sensors/odom/raw, rate: 2, speed: 1, turn: 1, noise: 0 }")
	for range 3 {
		r.Advance(500 * time.Millisecond)
	}
	for _, o := range nodetest.PublishedJSON[simsensor.Odometry](r, "sensors/odom/raw") {
		fmt.Printf("%s x=%.3f y=%.3f theta=%.1f\n", o.Stamp, o.X, o.Y, o.Theta)
	}
	// Output:
	// 2026-01-01T00:00:00.5Z x=0.439 y=0.240 theta=0.5
	// 2026-01-01T00:00:01Z x=0.709 y=0.660 theta=1.0
	// 2026-01-01T00:00:01.5Z x=0.744 y=1.159 theta=1.5
}
