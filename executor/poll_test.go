package executor_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/tsc"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// deaf is the system clock with alarms that never ring: only the workers'
// polling serves the timers.
type deaf struct{ timers.System }

type deafAlarm struct{}

func (deaf) NewAlarm(func()) timers.Alarm { return deafAlarm{} }
func (deafAlarm) Set(time.Time)           {}
func (deafAlarm) Stop()                   {}

// TestBusyWorkersServeDueTimers keeps the only worker busy with callbacks
// that publish their own next message, on a clock whose alarms never ring:
// the timer still fires, because the worker serves due timers between
// callbacks, ahead of the queued subscription.
func TestBusyWorkersServeDueTimers(t *testing.T) {
	if tsc.NsPerTick() == 0 {
		t.Log("no trusted time-stamp counter: polling is off, the alarm alone serves timers")
	}
	ex := executor.New(executor.Options{Workers: 1, Clock: deaf{}})
	o := ex.NewOwner("busy", nil)
	bus := subscribers.NewBus()
	p, err := o.Publisher(bus, "loop")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err = o.Subscribe(bus, "loop", func(subscribers.Message) {
		for t := time.Now(); time.Since(t) < 200*time.Microsecond; {
		}
		if ctx.Err() == nil {
			p.Publish(nil)
		}
	})
	require.NoError(t, err)
	fired := make(chan timers.Event, 100)
	_, err = o.NewTimer(2*time.Millisecond, func(ev timers.Event) {
		select {
		case fired <- ev:
		default:
		}
	})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- ex.Run(ctx) }()
	p.Publish(nil)

	var got []timers.Event
	timeout := time.After(10 * time.Second)
	for len(got) < 5 && tsc.NsPerTick() != 0 {
		select {
		case ev := <-fired:
			got = append(got, ev)
		case <-timeout:
			t.Fatalf("the timer fired %d times in 10 s", len(got))
		}
	}
	for i := 1; i < len(got); i++ {
		require.True(t, got[i].Expected.After(got[i-1].Expected), "calls serve later and later deadlines")
	}
	if tsc.NsPerTick() == 0 {
		select {
		case <-fired:
			t.Fatal("the timer fired with polling off and an alarm that never rings")
		case <-time.After(50 * time.Millisecond):
		}
	}
	cancel()
	require.NoError(t, <-done)
}
