package executor

import (
	"time"

	"github.com/robotexec/robotexec/internal/timerq"
)

// WithHandoff returns o with the hand-off of in-process publications (see
// Publisher) on, as in every executor, or off: then every publication made
// in a callback wakes an idle worker. It is for the tests and benchmarks
// that measure what the hand-off saves, and no part of the package's API.
func WithHandoff(o Options, on bool) Options {
	o.noHandoff = !on
	return o
}

// Holds returns how many times the executor's workers held a callback
// for a timer (Options.ReserveForTimers), for tests that check they did.
func Holds(e *Executor) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.nholds
}

// TimersWaiting returns the executor's count of due timers taken from the
// wait set that have not started, for tests that check it returns to 0.
func TimersWaiting(e *Executor) int64 { return e.timersWaiting.Load() }

// Queued returns the number of callbacks queued on g and not yet run,
// the one running included, for tests that wait until a callback has been
// queued on a busy group.
func Queued(g *Group) int32 { return g.scheduled.Load() }

// Resource is a resource of the executor, for the tests to look at.
type Resource = resource

// Resource returns the executor's resource named name.
func (e *Executor) Resource(name string) *Resource { return e.resource(name) }

// MaxStreak is maxStreak, for the tests.
const MaxStreak = maxStreak

// NewDeaf returns New(opts) with a timer queue on the system's clock whose
// alarms never ring, which the queue still polls as the system's clock (on
// the time-stamp counter where it is trusted): for the tests that check
// that workers serve due timers themselves. A clock of a test's own
// (Options.Clock) is not polled.
func NewDeaf(opts Options) *Executor {
	e := New(opts)
	e.timers = timerq.NewQueue(deafSystem{}, e.set)
	return e
}

// deafSystem is the system's clock, its alarms deaf.
type deafSystem struct{ timerq.System }

func (deafSystem) NewAlarm(func()) timerq.Alarm { return deafAlarm{} }

type deafAlarm struct{}

func (deafAlarm) Set(time.Time) {}
func (deafAlarm) Stop()         {}

// EarlyRing is the timer queue's early ring (early) for due timers at
// deadline, for the tests of whom it wakes.
func EarlyRing(e *Executor, deadline time.Time, due int) { e.early(deadline, due) }
