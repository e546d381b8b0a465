package nodes

import (
	"context"
	"time"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/nodehooks"
	"github.com/robotexec/robotexec/internal/regopt"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// timerName is a timer's name in Hooks.
func timerName(o regopt.Values[*executor.Group], period time.Duration) string {
	if o.Name != "" {
		return o.Name
	}
	return "timer(" + period.String() + ")"
}

// hookTimer wraps cb with the env's TimerCall hook, if any; *t is the
// timer once made.
func (n *Node) hookTimer(name string, t **timers.Timer, cb func(context.Context, timers.Event)) func(context.Context, timers.Event) {
	h := n.hooks
	if h == nil || h.TimerCall == nil {
		return cb
	}
	node := n.spec.Name
	return func(ctx context.Context, ev timers.Event) {
		if h.TimerCall(node, name, *t, &ev, n.handled.Load()) {
			cb(ctx, ev)
		}
	}
}

// timerMade tells the env's TimerMade hook, if any, of a timer.
func (n *Node) timerMade(name string, t *timers.Timer, cb func(context.Context, timers.Event)) {
	if h := n.hooks; h != nil && h.TimerMade != nil && t != nil {
		h.TimerMade(n.spec.Name, name, t, cb)
	}
}

// hookMessages wraps the message callback of the subscription named name
// with the env's Counted and Handling hooks, if any: a message that
// Counted refuses is skipped as if it had never come, and is not counted
// among the node's handled messages.
func (n *Node) hookMessages(name string, cb func(context.Context, subscribers.Message)) func(context.Context, subscribers.Message) {
	h := n.hooks
	if h == nil {
		return cb
	}
	run := n.counted(name)
	if run == nil && h.Handling == nil {
		return cb
	}
	node := n.spec.Name
	return func(ctx context.Context, m subscribers.Message) {
		switch {
		case run != nil && !run():
			return
		case h.Handling == nil:
			cb(ctx, m)
			return
		}
		k := n.handled.Load()
		h.Handling(ctx, node, k, false)
		cb(ctx, m)
		n.handled.Add(1)
		h.Handling(ctx, node, k, true)
	}
}

// hookOneShot wraps the callback of the one-shot timer named name with
// the env's Rings hook, if any.
func (n *Node) hookOneShot(name string, cb func(context.Context, timers.Event)) func(context.Context, timers.Event) {
	h := n.hooks
	if h == nil || h.Rings == nil {
		return cb
	}
	ring := h.Rings(n.spec.Name, n.callbackKey(nodehooks.OneShot, name))
	if ring == nil {
		return cb
	}
	return func(ctx context.Context, ev timers.Event) {
		if ring(ev) {
			cb(ctx, ev)
		}
	}
}

// counted returns the env's Counted hook's function for the node's next
// subscription named name, or nil.
func (n *Node) counted(name string) func() bool {
	h := n.hooks
	if h == nil || h.Counted == nil {
		return nil
	}
	return h.Counted(n.spec.Name, n.callbackKey(nodehooks.Subscription, name))
}

// callbackKey returns the key of the node's next callback of kind named
// name (see nodehooks.Key).
func (n *Node) callbackKey(kind, name string) string {
	key := callbackKey{kind, name}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.keys == nil {
		n.keys = map[callbackKey]int{}
	}
	n.keys[key]++
	return nodehooks.Key(kind, name, n.keys[key])
}

// callbackKey is a kind and a name of a node's callbacks, to number
// those that share both (see nodehooks.Key).
type callbackKey struct{ kind, name string }

// published tells the env's Published hook, if any, of a publication.
func (n *Node) published(topic string, payload []byte) {
	if h := n.hooks; h != nil && h.Published != nil {
		h.Published(n.spec.Name, topic, payload, n.Clock().Now())
	}
}
