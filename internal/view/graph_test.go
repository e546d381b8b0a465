package view_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/view"
)

// graphUpdate is a connectionGraphUpdate, the fields the tests read.
type graphUpdate struct {
	Op              string
	PublishedTopics []struct {
		Name         string
		PublisherIDs []string `json:"publisherIds"`
	}
	SubscribedTopics []struct {
		Name          string
		SubscriberIDs []string `json:"subscriberIds"`
	}
	RemovedTopics []string
}

// nextGraph reads messages up to the next connectionGraphUpdate.
func nextGraph(t *testing.T, ws *websocket.Conn) graphUpdate {
	t.Helper()
	for {
		require.NoError(t, ws.SetReadDeadline(time.Now().Add(wait)))
		_, data, err := ws.ReadMessage()
		require.NoError(t, err)
		var u graphUpdate
		if json.Unmarshal(data, &u) == nil && u.Op == "connectionGraphUpdate" {
			return u
		}
	}
}

// TestConnectionGraph: a viewer that subscribes to the connection graph
// gets it in whole, then what changed (topics whose nodes changed, topics
// gone), of the topics its read filters match.
func TestConnectionGraph(t *testing.T) {
	t.Parallel()
	s := listen(t, view.Options{ConnectionGraph: true,
		Users: []view.User{{Username: "ops", Password: "pw", Read: []string{"robot/#"}}}})
	s.SetGraph(view.Graph{
		Publishers:  map[string][]string{"robot/a": {"p@1"}, "robot/b": {"p@1"}, "secret/c": {"p@1"}},
		Subscribers: map[string][]string{"robot/a": {"s@2"}},
	})
	ws, _, err := dial(t, s, "ops", "pw")
	require.NoError(t, err)
	require.Equal(t, []string{"connectionGraph"}, nextOp(t, ws, "serverInfo").Capabilities)
	send(t, ws, map[string]any{"op": "subscribeConnectionGraph"})
	u := nextGraph(t, ws)
	require.Len(t, u.PublishedTopics, 2, "%+v", u)
	require.Equal(t, "robot/a", u.PublishedTopics[0].Name)
	require.Equal(t, []string{"p@1"}, u.PublishedTopics[0].PublisherIDs)
	require.Equal(t, "robot/b", u.PublishedTopics[1].Name)
	require.Len(t, u.SubscribedTopics, 1)
	require.Equal(t, []string{"s@2"}, u.SubscribedTopics[0].SubscriberIDs)
	require.Empty(t, u.RemovedTopics)

	s.SetGraph(view.Graph{
		Publishers:  map[string][]string{"robot/a": {"p@1", "q@3"}, "secret/c": {"x@1"}},
		Subscribers: map[string][]string{"robot/a": {"s@2"}},
	})
	u = nextGraph(t, ws)
	require.Len(t, u.PublishedTopics, 1, "%+v", u)
	require.Equal(t, []string{"p@1", "q@3"}, u.PublishedTopics[0].PublisherIDs)
	require.Empty(t, u.SubscribedTopics, "robot/a's subscribers did not change")
	require.Equal(t, []string{"robot/b"}, u.RemovedTopics)

	send(t, ws, map[string]any{"op": "unsubscribeConnectionGraph"})
	send(t, ws, map[string]any{"op": "subscribeConnectionGraph"})
	u = nextGraph(t, ws)
	require.Len(t, u.PublishedTopics, 1, "in whole again: %+v", u)
	require.Len(t, u.SubscribedTopics, 1, "in whole again: %+v", u)
}

// TestConnectionGraphFilters: a node on a topic filter is shown on the
// channels' topics that the filter matches (and on the filter while it
// matches none); a new channel that the filter matches updates the graph.
func TestConnectionGraphFilters(t *testing.T) {
	t.Parallel()
	s := listen(t, view.Options{ConnectionGraph: true, Anonymous: true})
	s.SetGraph(view.Graph{
		Publishers:  map[string][]string{"sensors/imu/raw": {"imu@1"}},
		Subscribers: map[string][]string{"sensors/+/raw": {"bridge@1"}, "sensors/imu/raw": {"log@2"}, "robot/#": {"wd@1"}},
	})
	ws, _, err := dial(t, s, "", "")
	require.NoError(t, err)
	send(t, ws, map[string]any{"op": "subscribeConnectionGraph"})
	subs := map[string][]string{}
	for u := nextGraph(t, ws); ; u = nextGraph(t, ws) {
		for _, st := range u.SubscribedTopics {
			subs[st.Name] = st.SubscriberIDs
		}
		if len(subs) >= 2 {
			break
		}
	}
	require.Equal(t, map[string][]string{"sensors/imu/raw": {"bridge@1", "log@2"}, "robot/#": {"wd@1"}}, subs,
		"the bridge's filter joined with the topic the graph names; the watchdog's matches none")

	s.Observe("robot/imu/data", []byte(`{"x":1}`), time.Now())
	for {
		u := nextGraph(t, ws)
		for _, st := range u.SubscribedTopics {
			subs[st.Name] = st.SubscriberIDs
		}
		for _, name := range u.RemovedTopics {
			delete(subs, name)
		}
		if subs["robot/imu/data"] != nil {
			break
		}
	}
	require.Equal(t, map[string][]string{"sensors/imu/raw": {"bridge@1", "log@2"}, "robot/imu/data": {"wd@1"}}, subs,
		"a new channel that the watchdog's filter matches")
}

// TestNoConnectionGraph: without Options.ConnectionGraph, the capability
// is not offered and a subscription to the graph is refused.
func TestNoConnectionGraph(t *testing.T) {
	t.Parallel()
	s := listen(t, view.Options{Anonymous: true})
	ws, _, err := dial(t, s, "", "")
	require.NoError(t, err)
	require.Empty(t, nextOp(t, ws, "serverInfo").Capabilities)
	send(t, ws, map[string]any{"op": "subscribeConnectionGraph"})
	require.Contains(t, nextOp(t, ws, "status").Message, "no connection graph")
}
