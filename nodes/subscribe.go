package nodes

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync/atomic"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/subscribers"
)

// Subscribe calls cb with every message on topic decoded from JSON into a
// T (encoding/json). A payload that does not decode is counted as dropped
// (reason malformed) and logged, at most once a second with a count of the
// rest, and cb is not called.
func Subscribe[T any](n *Node, topic string, cb func(context.Context, T), opts ...executor.Option) *subscribers.Subscription {
	return n.SubscribeSelf(topic, func(ctx context.Context, s *subscribers.Subscription, m subscribers.Message) {
		var v T
		if err := json.Unmarshal(m.Payload, &v); err != nil {
			s.Drop(subscribers.Malformed)
			n.decode.Log(n.logger, slog.LevelWarn, "payload does not decode", "topic", m.Topic, "err", err)
			return
		}
		cb(ctx, v)
	}, opts...)
}

// SubscribeSelf is Subscribe with raw messages whose callback also
// receives its own subscription, to count the messages it drops with
// s.Drop(reason).
func (n *Node) SubscribeSelf(topic string, cb func(ctx context.Context, s *subscribers.Subscription, m subscribers.Message), opts ...executor.Option) *subscribers.Subscription {
	// The subscription is known before it is attached, so before a
	// message (a retained one, say) can reach the callback.
	var sub atomic.Pointer[subscribers.Subscription]
	made := executor.Made(func(s *subscribers.Subscription) { sub.Store(s) })
	return n.Subscribe(topic, func(ctx context.Context, m subscribers.Message) { cb(ctx, sub.Load(), m) }, append(opts[:len(opts):len(opts)], made)...)
}
