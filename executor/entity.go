package executor

import (
	"context"
	"runtime/debug"
	"sync/atomic"

	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/facade"
	"github.com/robotexec/robotexec/internal/timerq"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// entity is the executor's record of a registered callback; the wait set
// entity's Data points to it.
type entity struct {
	owner   *Owner
	name    string
	group   *Group // the mutually exclusive group that serializes it, or nil
	timer   *timerq.Timer
	sub     *bus.Subscription
	onTimer func(context.Context, timers.Event)
	onMsg   func(context.Context, subscribers.Message)
	acq     *acquisition // the callback's resources, or nil
	panics  atomic.Uint64
	// priority is the callback's (see Priority); stamp orders a queued
	// urgent subscription among the queued ones (see pickLocked). e.mu
	// guards stamp.
	priority int
	// est is the mean run time of a subscription's callback, in the
	// ticks of the timer queue's poll clock, where workers measure it
	// (Options.ReserveForTimers); heldSince is when a worker first held
	// it for a timer since it last left the run queue, 0 if none. e.mu
	// guards heldSince.
	est       atomic.Int64
	heldSince int64
	stamp     uint64
}

// callTimer and callMessage call en's callback with r, the context of the
// run (see run). They are the only functions that call callbacks, and the
// one place where callbacks' panics are recovered (recoverPanic).
func (e *Executor) callTimer(r *bus.Run, en *entity, ev timerq.Event) {
	defer e.recoverPanic(en)
	en.onTimer(r, timers.Event(ev))
}

func (e *Executor) callMessage(r *bus.Run, en *entity, m *bus.Message) {
	defer e.recoverPanic(en)
	en.onMsg(r, *facade.Message(m))
}

// recoverPanic turns a callback's panic into a logged, counted error; the
// worker carries on.
func (e *Executor) recoverPanic(en *entity) {
	r := recover()
	if r == nil {
		return
	}
	e.panics.Add(1)
	en.panics.Add(1)
	e.log.Error("executor: callback panicked",
		"node", en.owner.name, "callback", en.name, "panic", r, "stack", string(debug.Stack()))
}

// Callback describes a registered callback, for metrics and tools.
type Callback struct {
	// ID identifies the callback among the executor's, as Run.ID does.
	ID uint64
	// Owner and Name are the owner's and the callback's names.
	Owner, Name string
	// Group names the mutually exclusive group that serializes the
	// callback, or is empty.
	Group string
	// Timer is the callback's timer, or nil for a subscription.
	Timer *timers.Timer
	// Subscription is the callback's subscription, or nil for a timer.
	Subscription *subscribers.Subscription
	// Panics counts the callback's panics.
	Panics uint64
}

// Callbacks returns every callback registered with the executor, in
// registration order.
func (e *Executor) Callbacks() []Callback {
	e.regMu.Lock()
	ents := append([]*entity(nil), e.entities...)
	e.regMu.Unlock()
	out := make([]Callback, len(ents))
	for i, en := range ents {
		out[i] = en.describe()
	}
	return out
}

// Callback returns the callback whose ID is id (a Run's), while it is
// registered. It takes time in proportion to the number of callbacks:
// a RunObserver should keep what it needs of each.
func (e *Executor) Callback(id uint64) (Callback, bool) {
	e.regMu.Lock()
	defer e.regMu.Unlock()
	for _, en := range e.entities {
		if en.id() == id {
			return en.describe(), true
		}
	}
	return Callback{}, false
}

func (en *entity) id() uint64 {
	if en.timer != nil {
		return en.timer.ID()
	}
	return en.sub.ID()
}

func (en *entity) describe() Callback {
	cb := Callback{ID: en.id(), Owner: en.owner.name, Name: en.name, Panics: en.panics.Load()}
	if en.timer != nil {
		cb.Timer = facade.PublicTimer(en.timer)
	}
	if en.sub != nil {
		cb.Subscription = facade.PublicSub(en.sub)
	}
	if en.group != nil {
		cb.Group = en.group.name
	}
	return cb
}
