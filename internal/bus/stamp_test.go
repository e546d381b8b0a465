package bus

import (
	"context"
	"testing"
	"time"

	"github.com/robotexec/robotexec/waitset"
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

// A publication that only this process's subscriptions get carries the
// time it was published, though its worker makes the time.Time when it
// takes the message (see stamp): after re-anchors, and through both
// publishing paths, a run's (offer) and any other context's (deliver).
func TestStampIsThePublicationsTime(t *testing.T) {
	const slack = time.Microsecond
	r := new(Router)
	sub, err := New("t", Options{Depth: 64})
	if err != nil {
		t.Fatal(err)
	}
	waitset.New(nil, nil).Register(Entity(sub), waitset.Subscription)
	if err := r.Attach(sub); err != nil {
		t.Fatal(err)
	}
	pub, err := r.Publisher("t")
	if err != nil {
		t.Fatal(err)
	}
	type window struct{ before, after time.Time }
	var published []window
	for i := range 6 {
		before := time.Now()
		if i%2 == 0 {
			_, err = pub.PublishMessage(context.Background(), Message{})
		} else {
			run := (&RunScope{Stop: context.Background()}).NewRun()
			_, err = pub.PublishMessage(run, Message{})
			run.End()
		}
		published = append(published, window{before, time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(reanchor / 2)
	}
	time.Sleep(2 * reanchor)
	for i, w := range published {
		m, seq, ok, _ := Take(sub)
		if !ok || seq != uint64(i+1) {
			t.Fatalf("take %d: ok %v, seq %d", i, ok, seq)
		}
		if m.Received.Before(w.before.Add(-slack)) || m.Received.After(w.after.Add(slack)) {
			t.Errorf("message %d: received %v, published within [%v, %v]", i, m.Received, w.before, w.after)
		}
	}
}
