package builtin_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/nodes/builtin"
	"github.com/robotexec/robotexec/subscribers"
)

// dropped returns the drops for reason of the subscription callback
// named name of node.
func (w *world) dropped(node, name string, reason subscribers.Reason) uint64 {
	for _, cb := range w.ex.Callbacks() {
		if cb.Owner == node && cb.Name == name && cb.Subscription != nil {
			return cb.Subscription.Stats().Dropped[reason]
		}
	}
	w.t.Fatalf("no subscription %s of node %s", name, node)
	return 0
}

// A watchdog watches at most max_topics topics: the least recently seen
// one is evicted (counted), and never goes stale; whatever the number of
// topics, the node has two callbacks (and so two metric label sets).
func TestWatchdogMaxTopics(t *testing.T) {
	w := newWorld(t)
	w.build("wd", "watchdog", "watch: t/+\ntimeout: 300ms\nalarm: alarm\nmax_topics: 2")
	alarms := w.collect("alarm")
	w.start()
	for _, topic := range []string{"t/a", "t/b", "t/c"} {
		w.publish(topic, "1")
	}
	var stale []string
	for _, m := range receive(t, alarms, 2, 10*time.Second) {
		var a builtin.Alarm
		require.NoError(t, json.Unmarshal(m.Payload, &a))
		stale = append(stale, a.Topic+" "+a.State)
	}
	require.Equal(t, []string{"t/b stale", "t/c stale"}, stale, "in the order they fell silent")
	quietFor(t, alarms, 600*time.Millisecond) // t/a was evicted
	require.Equal(t, uint64(1), w.dropped("wd", "watch", subscribers.Evicted))

	// A stale topic is evicted before a live one.
	w.publish("t/c", "2") // ok
	ok := receive(t, alarms, 1, 10*time.Second)
	require.Contains(t, string(ok[0].Payload), `"state":"ok"`)
	w.publish("t/d", "1") // evicts stale t/b, not live t/c
	var got []string
	for _, m := range receive(t, alarms, 2, 10*time.Second) {
		var a builtin.Alarm
		require.NoError(t, json.Unmarshal(m.Payload, &a))
		got = append(got, a.Topic+" "+a.State)
	}
	require.ElementsMatch(t, []string{"t/c stale", "t/d stale"}, got)
	require.Equal(t, uint64(2), w.dropped("wd", "watch", subscribers.Evicted))

	var names []string
	for _, cb := range w.ex.Callbacks() {
		if cb.Owner == "wd" {
			names = append(names, cb.Name)
		}
	}
	require.ElementsMatch(t, []string{"timeout", "watch"}, names)
}

// A bridge's max_rate table holds at most max_topics topics; a topic
// evicted from it is forwarded again at once.
func TestBridgeMaxTopics(t *testing.T) {
	w := newWorld(t)
	w.build("br", "bridge", "from: in/+\nto: out/+\nmax_rate: 0.001\nmax_topics: 2")
	out := w.collect("out/+")
	w.start()
	for i := range 4 {
		w.publish(fmt.Sprintf("in/%d", i%3), "x") // 0 1 2 0: 0 was evicted by 2
	}
	w.publish("in/2", "x") // still remembered: rate limited
	got := receive(t, out, 4, 10*time.Second)
	var topics []string
	for _, m := range got {
		topics = append(topics, m.Topic)
	}
	require.Equal(t, []string{"out/0", "out/1", "out/2", "out/0"}, topics)
	quietFor(t, out, 300*time.Millisecond)
	require.Equal(t, uint64(2), w.dropped("br", "bridge", subscribers.Evicted), "by in/2, then by in/0")
	require.Equal(t, uint64(1), w.dropped("br", "bridge", subscribers.RateLimited))
}
