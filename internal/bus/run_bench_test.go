package bus

import (
	"context"
	"testing"

	"github.com/robotexec/robotexec/waitset"
)

// BenchmarkBackpressureDecision is what deciding that a publication is a
// callback's costs, per publication: finding the run in its context (the
// run itself, or a context a callback derived from it), beginning and
// ending the publication under it, and reporting an overloaded queue.
func BenchmarkBackpressureDecision(b *testing.B) {
	s, err := New("t", Options{Depth: 1, Overflow: Block})
	if err != nil {
		b.Fatal(err)
	}
	run := (&RunScope{Stop: context.Background()}).NewRun()
	derived, cancel := context.WithCancel(run)
	defer cancel()
	for _, bc := range []struct {
		name string
		ctx  context.Context
	}{{"run", run}, {"derived", derived}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r := RunOf(bc.ctx)
				if err := r.enter(); err != nil {
					b.Fatal(err)
				}
				r.overloaded(s)
				r.leave()
			}
		})
	}
}

// BenchmarkPublishIntoFullBlockQueue is a callback's publication into a
// full Block queue (it goes past the depth, and reports the overload),
// followed by the take of one message, which keeps the queue at its
// depth: the whole path around the decision.
func BenchmarkPublishIntoFullBlockQueue(b *testing.B) {
	r := new(Router)
	s, err := New("t", Options{Depth: 1, Overflow: Block})
	if err != nil {
		b.Fatal(err)
	}
	waitset.New(nil, nil).Register(Entity(s), waitset.Subscription)
	if err := r.Attach(s); err != nil {
		b.Fatal(err)
	}
	pub, err := r.Publisher("t")
	if err != nil {
		b.Fatal(err)
	}
	run := (&RunScope{Stop: context.Background()}).NewRun()
	m := Message{Payload: []byte("x")}
	if _, err := pub.PublishMessage(run, m); err != nil {
		b.Fatal(err)
	}
	var got Message
	b.ReportAllocs()
	for b.Loop() {
		if _, err := pub.PublishMessage(run, m); err != nil {
			b.Fatal(err)
		}
		TakeInto(s, &got)
	}
}
