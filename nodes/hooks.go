package nodes

import (
	"time"

	"github.com/robotexec/robotexec/internal/regopt"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// Hooks observe and steer the nodes of an Env, for recording a run and
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
	// Node.Timer, with the node's name, the timer's name (its Name
	// option, or "timer(PERIOD)") and a function that calls the timer's
	// callback directly, which a replay uses.
	TimerMade func(node, name string, t *timers.Timer, call func(TimerEvent))
	// TimerCall is called before each call of such a timer with its
	// event, which it may change, and the node's handled count. The call
	// is skipped when it returns false.
	TimerCall func(node, name string, t *timers.Timer, ev *TimerEvent, handled uint64) bool
	// Handling is called before (done false) and after (done true) each
	// message callback of a node, with the node's handled count before
	// the callback.
	Handling func(node string, handled uint64, done bool)
}

// timerName is a timer's name in Hooks.
func timerName(o regopt.Values, period time.Duration) string {
	if o.Name != "" {
		return o.Name
	}
	return "timer(" + period.String() + ")"
}

// hookTimer wraps cb with the env's TimerCall hook, if any; *t is the
// timer once made.
func (n *Node) hookTimer(name string, t **timers.Timer, cb func(TimerEvent)) func(TimerEvent) {
	h := n.env.Hooks
	if h == nil || h.TimerCall == nil {
		return cb
	}
	node := n.spec.Name
	return func(ev TimerEvent) {
		if h.TimerCall(node, name, *t, &ev, n.handled.Load()) {
			cb(ev)
		}
	}
}

// timerMade tells the env's TimerMade hook, if any, of a timer.
func (n *Node) timerMade(name string, t *timers.Timer, cb func(TimerEvent)) {
	if h := n.env.Hooks; h != nil && h.TimerMade != nil && t != nil {
		h.TimerMade(n.spec.Name, name, t, cb)
	}
}

// hookMessages wraps a message callback with the env's Handling hook, if
// any, counting the node's handled messages.
func (n *Node) hookMessages(cb func(subscribers.Message)) func(subscribers.Message) {
	h := n.env.Hooks
	if h == nil || h.Handling == nil {
		return cb
	}
	node := n.spec.Name
	return func(m subscribers.Message) {
		k := n.handled.Load()
		h.Handling(node, k, false)
		cb(m)
		n.handled.Add(1)
		h.Handling(node, k, true)
	}
}

// published tells the env's Published hook, if any, of a publication.
func (n *Node) published(topic string, payload []byte) {
	if h := n.env.Hooks; h != nil && h.Published != nil {
		h.Published(n.spec.Name, topic, payload, n.Clock().Now())
	}
}
