package bench_test

import (
	"testing"
	"time"

	"github.com/robotexec/robotexec/internal/bench"
)

// BenchmarkViewForwarding runs the view forwarding workload (10 JSON
// topics at 1 kHz each, two viewers subscribed to all) and, as the
// baseline, robotexec echo's way with the same traffic, long enough for
// about b.N messages, and reports the CPU time added per message
// delivered (us_cpu/msg: per frame a viewer read, per line echo printed)
// and the arrival-to-delivery p99_us, and the msgs/s received. ns/op is
// the run's wall time over b.N (the traffic alone, then attached): not a
// figure of the workload.
func BenchmarkViewForwarding(b *testing.B) {
	for _, c := range []struct {
		name string
		run  func(int, time.Duration) (bench.ViewCost, error)
	}{{"view", bench.ViewForwarding}, {"echo", bench.EchoPrinting}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			// Twice: half the run measures the traffic alone.
			d := 2 * time.Duration(b.N) * bench.ViewPeriod / bench.ViewTopics
			cost, err := c.run(2, max(d, 200*time.Millisecond))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(cost.PerMessage(), "us_cpu/msg")
			reportMicros(b, "p99_us", cost.P99)
			b.ReportMetric(cost.Rate(), "msgs/s")
		})
	}
}
