package bus

import (
	"testing"
	"time"
)

// The stamps follow the monotonic clock across re-anchors, within a
// microsecond: a stamp taken between two readings of time.Now lies
// between them.
func TestStampFollowsTheClock(t *testing.T) {
	const slack = time.Microsecond
	deadline := time.Now().Add(3 * reanchor)
	n, worst := 0, time.Duration(0)
	for time.Now().Before(deadline) {
		before := time.Now()
		s := now()
		after := time.Now()
		n++
		if off := before.Sub(s); off > worst {
			worst = off
		}
		if off := s.Sub(after); off > worst {
			worst = off
		}
		if s.Before(before.Add(-slack)) || s.After(after.Add(slack)) {
			t.Fatalf("stamp %d: %v not within %v of [%v, %v]", n, s, slack, before, after)
		}
	}
	t.Logf("%d stamps over %v, at most %v outside their readings of time.Now", n, 3*reanchor, worst)
}
