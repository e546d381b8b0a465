package builtin_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/nodes"
	"github.com/robotexec/robotexec/nodes/nodetest"
	"github.com/robotexec/robotexec/subscribers"
)

// dropped returns the drops for reason of the subscription callback
// named name of node n.
func dropped(t *testing.T, n *nodes.Node, name string, reason subscribers.Reason) uint64 {
	t.Helper()
	for _, cb := range n.Executor().Callbacks() {
		if cb.Owner == n.Name() && cb.Name == name && cb.Subscription != nil {
			return cb.Subscription.Stats().Dropped[reason]
		}
	}
	t.Fatalf("no subscription %s of node %s", name, n.Name())
	return 0
}

// A watchdog watches at most max_topics topics: the least recently seen
// one is evicted (counted), and never goes stale; whatever the number of
// topics, the node has two callbacks (and so two metric label sets).
func TestWatchdogMaxTopics(t *testing.T) {
	r := nodetest.New(t)
	wd := r.MustBuild("wd", "watchdog", "watch: t/+\ntimeout: 300ms\nalarm: alarm\nmax_topics: 2")
	for _, topic := range []string{"t/a", "t/b", "t/c"} {
		r.Publish(topic, "1")
	}
	r.Advance(300 * time.Millisecond)
	require.Equal(t, []string{"t/b stale", "t/c stale"}, alarms(t, r, "alarm"), "in the order they fell silent")
	r.Advance(600 * time.Millisecond)
	require.Len(t, alarms(t, r, "alarm"), 2, "t/a was evicted")
	require.Equal(t, uint64(1), dropped(t, wd, "watch", subscribers.Evicted))

	// A stale topic is evicted before a live one.
	r.Publish("t/c", "2")
	require.Equal(t, "t/c ok", alarms(t, r, "alarm")[2])
	r.Publish("t/d", "1") // evicts stale t/b, not live t/c
	r.Advance(300 * time.Millisecond)
	require.ElementsMatch(t, []string{"t/c stale", "t/d stale"}, alarms(t, r, "alarm")[3:])
	require.Equal(t, uint64(2), dropped(t, wd, "watch", subscribers.Evicted))

	var names []string
	for _, cb := range wd.Executor().Callbacks() {
		if cb.Owner == "wd" {
			names = append(names, cb.Name)
		}
	}
	require.ElementsMatch(t, []string{"timeout", "watch"}, names)
}

// A bridge's max_rate table holds at most max_topics topics; a topic
// evicted from it is forwarded again at once.
func TestBridgeMaxTopics(t *testing.T) {
	r := nodetest.New(t)
	br := r.MustBuild("br", "bridge", "from: in/+\nto: out/+\nmax_rate: 0.001\nmax_topics: 2")
	for i := range 4 {
		r.Publish(fmt.Sprintf("in/%d", i%3), fmt.Sprint(i)) // 0 1 2 0: 0 was evicted by 2
	}
	r.Publish("in/2", "4") // still remembered: rate limited
	require.Equal(t, []string{"0", "1", "2", "3"}, r.Published("out/+"))
	require.Equal(t, []string{"0", "3"}, r.Published("out/0"))
	require.Equal(t, []string{"2"}, r.Published("out/2"))
	require.Equal(t, uint64(2), dropped(t, br, "bridge", subscribers.Evicted), "by in/2, then by in/0")
	require.Equal(t, uint64(1), dropped(t, br, "bridge", subscribers.RateLimited))
}
