package imufilter_test

import (
	"fmt"
	"time"

	_ "github.com/robotexec/robotexec/examples/imufilter" // registers imu_filter
	"github.com/robotexec/robotexec/nodes/nodetest"
)

// A node type runs without a broker or a wall clock: nodetest builds it
// from its params on a simulated clock and an in-process router, feeds it
// messages and advances the clock. This is how to test a node; in a test,
// nodetest.New takes the test's t.
func ExampleNew() {
	r := nodetest.New(nil)
	r.MustBuild("imu_filter", "imu_filter", "{ input: imu/raw, output: imu/filtered, alpha: 0.5, period: 100ms, log: 0s }")

	// The subscription callback blends both samples.
	r.Publish("imu/raw", `{"ax":1,"az":9.8,"gz":0.25}`, `{"ax":0.5,"az":9.8,"gz":0.125}`)
	// The timer callback publishes the average.
	r.Advance(100 * time.Millisecond)
	for _, m := range r.Published("imu/filtered") {
		fmt.Println(m)
	}
	// Output:
	// {"ax":0.75,"ay":0,"az":9.8,"gx":0,"gy":0,"gz":0.1875,"samples":2}
}
