// Package nodehooks holds the hooks through which robotexec run -record
// and robotexec replay observe and steer the nodes they build, and the
// nodes' test rig sees their publications. They are no part of the node
// API.
package nodehooks

import (
	"context"
	"strconv"
	"time"

	"github.com/robotexec/robotexec/timers"
)

// Hooks observe and steer the nodes of a nodes.Env, for recording a run and
// replaying it (robotexec run -record and robotexec replay). Any field may
// be nil. Handled counts, per node, the message callbacks that returned:
// with it a replay runs each timer call between the same messages as the
// recorded run did.
type Hooks struct {
	// Published is called with each publication of a node, before it is
	// published, with the time of the node's clock. It must not block
	// or keep anything but payload, which is never modified.
	Published func(node, topic string, payload []byte, at time.Time)
	// TimerMade is called when a node makes a periodic timer with
	// nodes.Node.Timer, with the node's name, the timer's name (its Name
	// option, or "timer(PERIOD)") and a function that calls the timer's
	// callback directly, which a replay uses.
	TimerMade func(node, name string, t *timers.Timer, call func(context.Context, timers.Event))
	// TimerCall is called before each call of such a timer with its
	// event, which it may change, and the node's handled count. The call
	// is skipped when it returns false.
	TimerCall func(node, name string, t *timers.Timer, ev *timers.Event, handled uint64) bool
	// Handling is called before (done false) and after (done true) each
	// message callback of a node, with the callback's run context and the
	// node's handled count before the callback.
	Handling func(ctx context.Context, node string, handled uint64, done bool)
	// Counted is called when a node makes a subscription, with the node's
	// name and the subscription's key (see Key). The function it returns,
	// if not nil, is called before each message callback of the
	// subscription; the message is skipped, as if it had never come, when
	// it returns false. A recording counts the messages each subscription
	// ran, so that its replay runs as many and no more: at the stop, the
	// last messages that came to a subscription (refused once it closed,
	// or published when it had gone) never ran.
	Counted func(node, key string) func() bool
	// Rings is called when a node makes a one-shot timer, with the
	// node's name and the timer's key (see Key). The function it returns,
	// if not nil, is called before each call of the timer with its event;
	// the call is skipped when it returns false. A recording notes when
	// each timer was last called (the event's Actual), so that its replay
	// makes no call whose deadline comes after that: at the stop, the
	// timers stopped before the deadlines still armed. (The number of
	// calls is no such fact: a call late under load serves what a replay,
	// on time, serves in several.)
	Rings func(node, key string) func(ev timers.Event) bool
}

// Key returns the key of a node's callback for Hooks.Counted and
// Hooks.Rings: kind
// ("subscription" or "one-shot") and the callback's name (its Name
// option, else its topic filter or "timer(DELAY)"), then " #2", " #3",
// ... for the second, third, ... callback of the node with the same kind
// and name (nth). A node that makes the same callbacks in the same order
// gets the same keys in a recorded run and in its replay.
func Key(kind, name string, nth int) string {
	k := kind + " " + name
	if nth > 1 {
		k += " #" + strconv.Itoa(nth)
	}
	return k
}

// The kinds of callbacks in a Key.
const (
	Subscription = "subscription"
	OneShot      = "one-shot"
)

// hooksKey is the context key of the hooks.
type hooksKey struct{}

// With returns ctx carrying h, for nodes.Build to give the node it builds.
func With(ctx context.Context, h *Hooks) context.Context {
	return context.WithValue(ctx, hooksKey{}, h)
}

// From returns the hooks ctx carries, or nil.
func From(ctx context.Context) *Hooks {
	h, _ := ctx.Value(hooksKey{}).(*Hooks)
	return h
}
