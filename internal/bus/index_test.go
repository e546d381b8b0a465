package bus_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/bus"
)

// indexFilters holds '#' and '+' at several depths, exact filters, empty
// levels and '$' filters.
var indexFilters = []string{
	"#", "+", "+/+", "+/#", "+/+/+", "+/+/#",
	"a", "a/b", "a/b/c", "a/#", "a/+", "a/+/#", "a/+/c", "a/+/c/#", "a/b/+", "a/b/#",
	"+/b", "+/b/+", "+/b/#", "+/+/c",
	"a//b", "a/+/b", "/", "/#", "/+",
	"$SYS/#", "$SYS/+", "$SYS/load",
	"x/y/z/w/#", "x/+/z/+/v",
}

var indexTopics = []string{
	"a", "a/", "a/b", "a/b/c", "a/b/c/d", "a/x/c", "a/x/c/d", "a/x", "a//b", "a//c",
	"b", "b/b", "b/b/b", "z/b/c", "/", "/a", "//", "$SYS", "$SYS/load", "$SYS/x/y",
	"x/y/z/w", "x/y/z/w/v", "x/1/z/2/v", "x/1/z/2/v/9", "q",
}

// filtersOf returns the sorted filters of subs.
func filtersOf(subs []*bus.Subscription) []string {
	out := []string{}
	for _, s := range subs {
		out = append(out, s.Filter())
	}
	slices.Sort(out)
	return out
}

// bruteForce returns the sorted filters of subs that match topic.
func bruteForce(subs []*bus.Subscription, topic string) []string {
	out := []string{}
	for _, s := range subs {
		if bus.Match(s.Filter(), topic) {
			out = append(out, s.Filter())
		}
	}
	slices.Sort(out)
	return out
}

func newSubs(t testing.TB, filters ...string) []*bus.Subscription {
	t.Helper()
	subs := make([]*bus.Subscription, len(filters))
	for i, f := range filters {
		s, err := bus.New(f, bus.Options{Depth: 1})
		require.NoError(t, err)
		subs[i] = s
	}
	return subs
}

func TestIndexMatch(t *testing.T) {
	var r bus.Index
	subs := newSubs(t, indexFilters...)
	for _, s := range subs {
		r.Add(s)
	}
	require.Equal(t, len(indexFilters), r.Len())

	tests := []struct {
		topic string
		want  []string
	}{
		{"a", []string{"#", "+", "+/#", "a", "a/#"}},
		{"a/b", []string{"#", "+/#", "+/+", "+/+/#", "+/b", "+/b/#", "a/#", "a/+", "a/+/#", "a/b", "a/b/#"}},
		{"a/x/c", []string{"#", "+/#", "+/+/#", "+/+/+", "+/+/c", "a/#", "a/+/#", "a/+/c", "a/+/c/#"}},
		{"$SYS/load", []string{"$SYS/#", "$SYS/+", "$SYS/load"}},
		{"$SYS", []string{"$SYS/#"}},
		{"/", []string{"#", "+/#", "+/+", "+/+/#", "/", "/#", "/+"}},
		{"q/r/s/t", []string{"#", "+/#", "+/+/#"}},
	}
	for _, tt := range tests {
		t.Run(tt.topic, func(t *testing.T) {
			want := slices.Clone(tt.want)
			slices.Sort(want)
			require.Equal(t, want, filtersOf(r.Match(tt.topic, nil)))
		})
	}
	for _, topic := range indexTopics {
		t.Run("brute force "+topic, func(t *testing.T) {
			require.Equal(t, bruteForce(subs, topic), filtersOf(r.Match(topic, nil)))
		})
	}
}

func TestIndexMatchAppendsToDst(t *testing.T) {
	var r bus.Index
	subs := newSubs(t, "a/+", "a/#")
	for _, s := range subs {
		r.Add(s)
	}
	marker := newSubs(t, "marker")[0]
	dst := make([]*bus.Subscription, 1, 8)
	dst[0] = marker
	got := r.Match("a/b", dst)
	require.Len(t, got, 3)
	require.Same(t, marker, got[0], "Match must keep what dst held")
	require.ElementsMatch(t, subs, got[1:])

	// The result must not alias the index's own lists: changing it must not
	// change what the index matches later.
	fresh := r.Match("a/b", nil)
	fresh[0] = marker
	require.ElementsMatch(t, subs, r.Match("a/b", nil))
}

func TestIndexAddRemoveGeneration(t *testing.T) {
	var r bus.Index
	require.Zero(t, r.Len())
	require.Equal(t, 1, r.NodeCount())
	require.Empty(t, r.Match("a/b", nil))

	subs := newSubs(t, "a/b", "a/b", "a/+", "a/#")
	gen := r.Generation()
	for i, s := range subs {
		r.Add(s)
		require.NotEqual(t, gen, r.Generation(), "Add must change the generation")
		gen = r.Generation()
		require.Equal(t, i+1, r.Len())
	}
	// Two subscriptions with the same filter are both matched.
	require.ElementsMatch(t, subs, r.Match("a/b", nil))

	tests := []struct {
		name    string
		remove  *bus.Subscription
		removed bool
		left    []*bus.Subscription
	}{
		{"first of two with one filter", subs[0], true, subs[1:]},
		{"again", subs[0], false, subs[1:]},
		{"hash", subs[3], true, subs[1:3]},
		{"never added", newSubs(t, "a/b")[0], false, subs[1:3]},
		{"never added, unknown path", newSubs(t, "q/+/#")[0], false, subs[1:3]},
		{"plus", subs[2], true, subs[1:2]},
		{"last", subs[1], true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := r.Generation()
			require.Equal(t, tt.removed, r.Remove(tt.remove))
			if tt.removed {
				require.NotEqual(t, before, r.Generation(), "a removal must change the generation")
			} else {
				require.Equal(t, before, r.Generation(), "a failed removal must not change the generation")
			}
			require.Equal(t, len(tt.left), r.Len())
			require.ElementsMatch(t, tt.left, r.Match("a/b", nil))
		})
	}
	require.Equal(t, 1, r.NodeCount(), "removing every subscription must prune the tree to its root")
}

func TestIndexRemovePrunes(t *testing.T) {
	tests := []struct {
		name    string
		keep    []string
		remove  []string
		nodes   int // nodes after the removal, the root included
		matches map[string]int
	}{
		{"deep exact", nil, []string{"a/b/c/d"}, 1, map[string]int{"a/b/c/d": 0}},
		{"deep wildcards", nil, []string{"a/+/c/#", "+/+/+", "#"}, 1, map[string]int{"a/b/c": 0}},
		{"keeps the parent", []string{"a/b"}, []string{"a/b/c"}, 3, map[string]int{"a/b": 1, "a/b/c": 0}},
		{"keeps the child", []string{"a/b/c"}, []string{"a/b"}, 4, map[string]int{"a/b": 0, "a/b/c": 1}},
		{"keeps a hash at the same node", []string{"a/#"}, []string{"a/b"}, 2, map[string]int{"a/b": 1, "a": 1}},
		{"keeps a sibling", []string{"a/+/x"}, []string{"a/b/x"}, 4, map[string]int{"a/b/x": 1, "a/c/x": 1}},
		{"keeps the plus branch", []string{"+/x"}, []string{"+/y"}, 3, map[string]int{"q/x": 1, "q/y": 0}},
		{"empty levels", nil, []string{"//", "a//b"}, 1, map[string]int{"//": 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r bus.Index
			keep := newSubs(t, tt.keep...)
			remove := newSubs(t, tt.remove...)
			for _, s := range keep {
				r.Add(s)
			}
			nodesBefore := r.NodeCount()
			for _, s := range remove {
				r.Add(s)
			}
			for _, s := range remove {
				require.True(t, r.Remove(s))
			}
			require.Equal(t, tt.nodes, r.NodeCount())
			require.Equal(t, nodesBefore, r.NodeCount(), "the tree must be as before the added subscriptions")
			for topic, n := range tt.matches {
				require.Len(t, r.Match(topic, nil), n, "topic %q", topic)
			}
		})
	}
}

// randomFilter returns a valid filter of up to 4 levels over a small
// alphabet, so that random filters and topics often match.
func randomFilter(rng *rand.Rand) string {
	n := 1 + rng.IntN(4)
	levels := make([]string, n)
	for i := range levels {
		switch k := rng.IntN(10); {
		case k < 2:
			levels[i] = "+"
		case k == 2 && i == n-1:
			levels[i] = "#"
		case k == 3:
			levels[i] = ""
		default:
			levels[i] = string(rune('a' + rng.IntN(3)))
		}
	}
	if f := strings.Join(levels, "/"); f != "" {
		return f
	}
	return "e"
}

func randomTopic(rng *rand.Rand) string {
	n := 1 + rng.IntN(4)
	levels := make([]string, n)
	for i := range levels {
		switch k := rng.IntN(10); {
		case k == 0:
			levels[i] = ""
		case k == 1 && i == 0:
			levels[i] = "$s"
		default:
			levels[i] = string(rune('a' + rng.IntN(3)))
		}
	}
	if topic := strings.Join(levels, "/"); topic != "" {
		return topic
	}
	return "e"
}

func TestIndexManySubscriptions(t *testing.T) {
	for seed := range uint64(5) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 42))
			var r bus.Index
			var subs []*bus.Subscription
			for range 500 {
				s, err := bus.New(randomFilter(rng), bus.Options{Depth: 1})
				require.NoError(t, err)
				r.Add(s)
				subs = append(subs, s)
			}
			check := func() {
				t.Helper()
				require.Equal(t, len(subs), r.Len())
				for range 200 {
					topic := randomTopic(rng)
					got := r.Match(topic, nil)
					require.Equal(t, bruteForce(subs, topic), filtersOf(got), "topic %q", topic)
				}
			}
			check()
			// Remove a random half, then everything.
			rng.Shuffle(len(subs), func(i, j int) { subs[i], subs[j] = subs[j], subs[i] })
			for len(subs) > 250 {
				require.True(t, r.Remove(subs[len(subs)-1]))
				subs = subs[:len(subs)-1]
			}
			check()
			for len(subs) > 0 {
				require.True(t, r.Remove(subs[len(subs)-1]))
				subs = subs[:len(subs)-1]
			}
			check()
			require.Equal(t, 1, r.NodeCount())
		})
	}
}

func TestIndexDistinctTopics(t *testing.T) {
	const n = 20_000
	var r bus.Index
	subs := make([]*bus.Subscription, n)
	for i := range subs {
		s, err := bus.New(fmt.Sprintf("robot/%d/odom", i), bus.Options{Depth: 1})
		require.NoError(t, err)
		r.Add(s)
		subs[i] = s
	}
	for _, i := range []int{0, 1, n / 2, n - 1} {
		got := r.Match(fmt.Sprintf("robot/%d/odom", i), nil)
		require.Equal(t, []*bus.Subscription{subs[i]}, got)
	}
	require.Empty(t, r.Match(fmt.Sprintf("robot/%d/odom", n), nil))
	// A lookup walks the topic's levels, so with room in dst it allocates
	// nothing however many subscriptions there are.
	dst := make([]*bus.Subscription, 0, 4)
	allocs := testing.AllocsPerRun(100, func() { dst = r.Match("robot/12345/odom", dst[:0]) })
	require.Zero(t, allocs)
}

// TestRouterRemoveReleases checks that the index does not keep a removed
// subscription reachable, and with it the messages in its queue.
func TestIndexRemoveReleases(t *testing.T) {
	tests := []struct {
		name    string
		filters []string
		remove  int
	}{
		{"last of a list", []string{"a/b", "a/b"}, 1},
		{"first of a list", []string{"a/b", "a/b"}, 0},
		{"last of a hash list", []string{"a/#", "a/#", "a/#"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r bus.Index
			subs := newSubs(t, tt.filters...)
			for _, s := range subs {
				r.Add(s)
			}
			released := make(chan struct{})
			runtime.AddCleanup(subs[tt.remove], func(ch chan struct{}) { close(ch) }, released)
			require.True(t, r.Remove(subs[tt.remove]))
			subs = slices.Delete(subs, tt.remove, tt.remove+1)

			deadline := time.After(5 * time.Second) // a failure bound, not a wait for success
			for collected := false; !collected; {
				runtime.GC()
				select {
				case <-released:
					collected = true
				case <-deadline:
					require.FailNow(t, "the index still references the removed subscription")
				case <-time.After(10 * time.Millisecond):
				}
			}
			require.Len(t, r.Match(strings.ReplaceAll(tt.filters[0], "#", "x"), nil), len(subs))
			runtime.KeepAlive(subs)
		})
	}
}

func BenchmarkIndexMatch(b *testing.B) {
	for _, n := range []int{10, 100_000} {
		b.Run(fmt.Sprintf("subs=%d", n), func(b *testing.B) {
			var r bus.Index
			for i := range n {
				s, err := bus.New(fmt.Sprintf("robot/%d/odom", i), bus.Options{Depth: 1})
				if err != nil {
					b.Fatal(err)
				}
				r.Add(s)
			}
			topic := fmt.Sprintf("robot/%d/odom", n/2)
			dst := make([]*bus.Subscription, 0, 4)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				dst = r.Match(topic, dst[:0])
			}
			if len(dst) != 1 {
				b.Fatalf("matched %d subscriptions, want 1", len(dst))
			}
		})
	}
}

func BenchmarkMatch(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		bus.Match("sport/+/player1/#", "sport/tennis/player1/score/wimbledon")
	}
}
