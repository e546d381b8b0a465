// Package nodetest tests node types without a broker or a wall clock.
//
// A [Rig] builds nodes from their params, as a config's nodes list gives
// them, on a simulated clock and an in-process router. A test publishes
// messages to them, advances the clock (or sets it back, as a clock topic
// does when a playback starts over), and reads what they published and
// what they logged:
//
//	func TestFilter(t *testing.T) {
//		r := nodetest.New(t)
//		r.MustBuild("filter", "imu_filter", "{ input: imu/raw, output: imu/filtered, period: 100ms }")
//		r.Publish("imu/raw", `{"ax":1}`)
//		r.Advance(100 * time.Millisecond)
//		got := nodetest.PublishedJSON[imufilter.Sample](r, "imu/filtered")
//		...
//	}
//
// Nothing runs on its own: the rig runs the callbacks that are ready, one
// at a time on the test's goroutine, before Publish or Advance returns,
// so a test reads the same results on every run.
//
// # Concurrency
//
// A Rig is for its test's goroutine. Its nodes may publish from
// goroutines of their own: Published and PublishedJSON see those
// publications too.
package nodetest
