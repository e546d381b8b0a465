package nodes

import (
	"context"
	"time"

	"github.com/robotexec/robotexec/internal/nodehooks"
	"github.com/robotexec/robotexec/internal/regopt"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// timerName is a timer's name in Hooks.
func timerName(o regopt.Values, period time.Duration) string {
	if o.Name != "" {
		return o.Name
	}
	return "timer(" + period.String() + ")"
}

// hookTimer wraps cb with the env's TimerCall hook, if any; *t is the
// timer once made.
func (n *Node) hookTimer(name string, t **timers.Timer, cb func(context.Context, timers.Event)) func(context.Context, timers.Event) {
	h := n.env.hooks
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
	if h := n.env.hooks; h != nil && h.TimerMade != nil && t != nil {
		h.TimerMade(n.spec.Name, name, t, cb)
	}
}

// hookMessages wraps a message callback with the env's Handling hook, if
// any, counting the node's handled messages.
func (n *Node) hookMessages(cb func(context.Context, subscribers.Message)) func(context.Context, subscribers.Message) {
	h := n.env.hooks
	if h == nil || h.Handling == nil {
		return cb
	}
	node := n.spec.Name
	return func(ctx context.Context, m subscribers.Message) {
		k := n.handled.Load()
		h.Handling(ctx, node, k, false)
		cb(ctx, m)
		n.handled.Add(1)
		h.Handling(ctx, node, k, true)
	}
}

// published tells the env's Published hook, if any, of a publication
// under ctx, unless ctx refuses it.
func (n *Node) published(ctx context.Context, topic string, payload []byte) {
	if h := n.env.hooks; h != nil && h.Published != nil && ctx.Err() == nil {
		h.Published(n.spec.Name, topic, payload, n.Clock().Now())
	}
}

func init() {
	nodehooks.At = func(env any) **nodehooks.Hooks { return &env.(*Env).hooks }
}
