package graph_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/graph"
)

// TestSet: the set joins the instances' graphs into publishers and
// subscribers per topic; an instance's graph that changes only in what
// does not name topics changes nothing, and a cleared one leaves.
func TestSet(t *testing.T) {
	t.Parallel()
	id, ok := graph.ClientID("robotexec/robot-1/graph")
	require.True(t, ok)
	require.Equal(t, "robot-1", id)
	for _, topic := range []string{"robotexec/robot-1/status", "robotexec/a/b/graph", "robotexec//graph", "robot/x/graph"} {
		_, ok := graph.ClientID(topic)
		require.False(t, ok, topic)
	}

	var s graph.Set
	a := `{"nodes":[{"name":"beat","publications":[{"topic":"hb"}],"subscriptions":[]},` +
		`{"name":"relay","publications":[{"topic":"out/+"}],"subscriptions":[{"topic":"in/+"}]}]}`
	b := `{"nodes":[{"name":"sink","publications":[],"subscriptions":[{"topic":"out/+"},{"topic":"hb"}]}]}`
	require.True(t, s.Put("a", []byte(a)))
	require.True(t, s.Put("b", []byte(b)))
	require.False(t, s.Put("b", []byte(`{"version":"later",`+b[1:])), "no endpoint changed")
	pubs, subs := s.Endpoints()
	require.Equal(t, map[string][]string{"hb": {"beat@a"}, "out/+": {"relay@a"}}, pubs)
	require.Equal(t, map[string][]string{"in/+": {"relay@a"}, "out/+": {"sink@b"}, "hb": {"sink@b"}}, subs)

	for _, topic := range []string{"robotexec/robot-1/graph", "robotexec/a/b/status", "robotexec//status"} {
		_, ok := graph.StatusID(topic)
		require.False(t, ok, topic)
	}
	id, ok = graph.StatusID("robotexec/b/status")
	require.True(t, ok)
	require.Equal(t, "b", id)
	require.False(t, s.SetStatus("b", []byte("online")), "online already")
	require.True(t, s.SetStatus("b", []byte("offline")), "b died: its will")
	pubs, subs = s.Endpoints()
	require.Equal(t, map[string][]string{"in/+": {"relay@a"}}, subs, "b is left out")
	require.False(t, s.Put("b", []byte(b)), "b's retained graph again: still offline")
	require.False(t, s.SetStatus("c", []byte("offline")), "c has no graph")
	require.True(t, s.SetStatus("b", []byte("online")), "b restarted")
	_, subs = s.Endpoints()
	require.Contains(t, subs, "hb")

	require.True(t, s.Put("a", nil), "a clean stop clears the graph")
	require.False(t, s.Put("a", nil))
	pubs, subs = s.Endpoints()
	require.Empty(t, pubs)
	require.Equal(t, map[string][]string{"out/+": {"sink@b"}, "hb": {"sink@b"}}, subs)
}
