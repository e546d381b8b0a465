package bus_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/bus"
)

func TestValidateFilter(t *testing.T) {
	tests := []struct {
		name    string
		filter  string
		wantErr string // substring of the error after the filter; "" means valid
	}{
		{"plain", "sensors/imu/raw", ""},
		{"single level", "a", ""},
		{"plus alone", "+", ""},
		{"hash alone", "#", ""},
		{"plus middle", "sport/+/player1", ""},
		{"plus first and hash last", "+/tennis/#", ""},
		{"plus everywhere", "+/+/+", ""},
		{"hash after plus", "a/+/#", ""},
		{"empty levels", "a//b", ""},
		{"only separator", "/", ""},
		{"leading separator", "/finance", ""},
		{"trailing separator", "finance/", ""},
		{"dollar topic", "$SYS/broker/#", ""},
		{"shared subscription", "$share/group/a/b", ""},
		{"spaces and unicode", "robot 1/étage/°C", ""},
		{"max length", strings.Repeat("a", 65535), ""},

		{"empty", "", "empty"},
		{"too long", strings.Repeat("a", 65536), "longer than 65535 bytes"},
		{"NUL", "a/\x00/b", "contains NUL"},
		{"hash not last", "a/#/b", "'#' must be the last level"},
		{"hash first of two", "#/a", "'#' must be the last level"},
		{"hash inside level", "sport/tennis#", "must fill a whole level"},
		{"hash before text", "a/#b", "must fill a whole level"},
		{"plus inside level", "sport+", "must fill a whole level"},
		{"plus after text", "a/b+/c", "must fill a whole level"},
		{"plus before text", "a/+b", "must fill a whole level"},
		{"double plus", "a/++", "must fill a whole level"},
		{"plus hash", "a/+#", "must fill a whole level"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := bus.ValidateFilter(tt.filter)
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			msg := err.Error()
			require.True(t, strings.HasPrefix(msg, "subscribers: topic filter "+strconv.Quote(tt.filter)+": "),
				"%.100s: the error must name the filter", msg)
			require.True(t, strings.HasSuffix(msg, tt.wantErr), "%.100s: want the reason %q", msg, tt.wantErr)
		})
	}
}

func TestValidateTopic(t *testing.T) {
	tests := []struct {
		name    string
		topic   string
		wantErr string
	}{
		{"plain", "sensors/imu/raw", ""},
		{"single level", "a", ""},
		{"empty levels", "a//b", ""},
		{"only separator", "/", ""},
		{"leading separator", "/finance", ""},
		{"dollar", "$SYS/broker/load", ""},
		{"unicode", "robot/étage/°C", ""},
		{"max length", strings.Repeat("x", 65535), ""},

		{"empty", "", "empty"},
		{"too long", strings.Repeat("x", 65536), "longer than 65535 bytes"},
		{"NUL", "a\x00b", "contains NUL"},
		{"plus level", "a/+/b", "wildcards are not allowed in a topic name"},
		{"hash level", "a/#", "wildcards are not allowed in a topic name"},
		{"plus inside level", "a/b+c", "wildcards are not allowed in a topic name"},
		{"hash inside level", "a#", "wildcards are not allowed in a topic name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := bus.ValidateTopic(tt.topic)
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			msg := err.Error()
			require.True(t, strings.HasPrefix(msg, "subscribers: topic "+strconv.Quote(tt.topic)+": "),
				"%.100s: the error must name the topic", msg)
			require.True(t, strings.HasSuffix(msg, tt.wantErr), "%.100s: want the reason %q", msg, tt.wantErr)
		})
	}
}

// matchCases are MQTT 3.1.1 matching rules (section 4.7), most taken from
// the examples of the standard.
var matchCases = []struct {
	filter, topic string
	want          bool
}{
	// Exact names.
	{"sport/tennis", "sport/tennis", true},
	{"sport/tennis", "sport/Tennis", false}, // case sensitive
	{"sport/tennis", "sport/tennis/player1", false},
	{"sport/tennis/player1", "sport/tennis", false},
	{"sport", "sport/", false},
	{"sport/", "sport/", true},
	{"a b/c", "a b/c", true}, // spaces are ordinary characters

	// '#' matches the parent and any number of levels.
	{"sport/tennis/player1/#", "sport/tennis/player1", true},
	{"sport/tennis/player1/#", "sport/tennis/player1/ranking", true},
	{"sport/tennis/player1/#", "sport/tennis/player1/score/wimbledon", true},
	{"sport/tennis/player1/#", "sport/tennis/player2", false},
	{"sport/tennis/player1/#", "sport/tennis", false},
	{"sport/#", "sport", true},
	{"a/#", "a", true},
	{"a/#", "a/", true},
	{"a/#", "ab", false},
	{"a/#", "b/a", false},
	{"#", "sport", true},
	{"#", "sport/tennis/player1", true},
	{"#", "/", true},
	{"#", "/finance", true},
	{"/#", "/finance", true},
	{"/#", "finance", false},

	// '+' matches exactly one level, possibly empty.
	{"sport/tennis/+", "sport/tennis/player1", true},
	{"sport/tennis/+", "sport/tennis/player2", true},
	{"sport/tennis/+", "sport/tennis/player1/ranking", false},
	{"sport/+", "sport", false},
	{"sport/+", "sport/", true},
	{"+", "sport", true},
	{"+", "sport/tennis", false},
	{"+", "/finance", false},
	{"+/+", "/finance", true},
	{"/+", "/finance", true},
	{"+/+", "/x", true},
	{"+/+", "x", false},
	{"+/+", "a/b/c", false},
	{"+/tennis/#", "sport/tennis/player1", true},
	{"+/tennis/#", "sport/tennis", true},
	{"+/tennis/#", "sport/golf", false},
	{"sport/+/player1", "sport/tennis/player1", true},
	{"sport/+/player1", "sport//player1", true},
	{"sport/+/player1", "sport/tennis/player2", false},
	{"a/+/#", "a", false},
	{"a/+/#", "a/b", true},
	{"a/+/#", "a/b/c/d", true},
	{"+/#", "a", true},

	// Empty levels are levels.
	{"a//b", "a//b", true},
	{"a//b", "a/b", false},
	{"a/+/b", "a//b", true},
	{"a/b", "a//b", false},
	{"/", "/", true},
	{"+/+", "/", true},
	{"+", "/", false},
	{"//", "/", false},

	// Wildcards at the first level do not match '$' topics.
	{"#", "$SYS", false},
	{"#", "$SYS/broker/load", false},
	{"+/monitor/Clients", "$SYS/monitor/Clients", false},
	{"+", "$SYS", false},
	{"+/#", "$SYS/x", false},
	{"$SYS/#", "$SYS/monitor/Clients", true},
	{"$SYS/#", "$SYS", true},
	{"$SYS/monitor/+", "$SYS/monitor/Clients", true},
	{"$SYS/+/Clients", "$SYS/monitor/Clients", true},
	{"a/+", "a/$b", true}, // '$' only matters at the first level
	{"a/#", "a/$b", true},
	{"+/$b", "a/$b", true},
}

func TestMatch(t *testing.T) {
	for _, tt := range matchCases {
		t.Run(tt.filter+" vs "+tt.topic, func(t *testing.T) {
			require.NoError(t, bus.ValidateFilter(tt.filter))
			require.NoError(t, bus.ValidateTopic(tt.topic))
			require.Equal(t, tt.want, bus.Match(tt.filter, tt.topic))
			require.Equal(t, tt.want, refMatch(tt.filter, tt.topic), "the reference matcher disagrees with the table")
		})
	}
}

// No filter matches the empty topic, which MQTT does not allow as a
// topic name: neither Match nor the index, so that a PUBLISH without a
// topic from a faulty broker reaches no subscription, "#" included.
func TestMatchEmptyTopic(t *testing.T) {
	var r bus.Index
	for _, filter := range []string{"#", "+", "+/#", "/#", "+/+", "$share/g/#", "$share/g/+"} {
		require.False(t, bus.Match(filter, ""), filter)
		s, err := bus.New(filter, bus.Options{Depth: 1})
		require.NoError(t, err)
		r.Add(s)
	}
	require.Empty(t, r.Match("", nil))
	require.Len(t, r.Match("a", nil), 5, "the filters but /# and +/+ match a one-level topic")
}

func TestMatchAllocatesNothing(t *testing.T) {
	allocs := testing.AllocsPerRun(100, func() {
		bus.Match("sport/+/player1/#", "sport/tennis/player1/score/wimbledon")
	})
	require.Zero(t, allocs)
}

// refMatch is MQTT 3.1.1 matching written as plainly as possible, as an
// oracle for Match and Router.Match.
func refMatch(filter, topic string) bool {
	f := strings.Split(filter, "/")
	tl := strings.Split(topic, "/")
	if strings.HasPrefix(topic, "$") && (f[0] == "+" || f[0] == "#") {
		return false
	}
	for i, level := range f {
		if level == "#" {
			return true // the rest, including the parent level
		}
		if i >= len(tl) {
			return false
		}
		if level != "+" && level != tl[i] {
			return false
		}
	}
	return len(f) == len(tl)
}

// FuzzMatch checks that Router.Match agrees with Match, and both with the
// reference matcher, for every valid filter, and that nothing panics. The
// seed corpus is in testdata/fuzz/FuzzMatch and below.
func FuzzMatch(f *testing.F) {
	for _, c := range matchCases {
		f.Add(c.filter, c.topic)
	}
	f.Fuzz(func(t *testing.T, filter, topic string) {
		// Match must not panic on any input, valid or not.
		got := bus.Match(filter, topic)
		route, err := bus.RouteFilter(filter)
		if err != nil {
			return
		}
		sub, err := bus.New(filter, bus.Options{Depth: 1})
		require.NoError(t, err)
		// A second subscription whose filter differs keeps the tree from
		// being trivial.
		other, err := bus.New("#", bus.Options{Depth: 1})
		require.NoError(t, err)

		var r bus.Index
		r.Add(other)
		r.Add(sub)
		matched := r.Match(topic, nil)
		routed := false
		for _, s := range matched {
			if s == sub {
				require.False(t, routed, "the index returned the subscription twice")
				routed = true
			}
		}
		// A shared subscription, $share/GROUP/FILTER, is routed by FILTER.
		require.Equal(t, bus.Match(route, topic), routed, "Index.Match and Match disagree on filter %q topic %q", filter, topic)
		if bus.ValidateTopic(topic) == nil {
			require.Equal(t, refMatch(filter, topic), got, "Match disagrees with MQTT on filter %q topic %q", filter, topic)
		}

		require.True(t, r.Remove(sub))
		require.False(t, r.Remove(sub))
		for _, s := range r.Match(topic, nil) {
			require.NotSame(t, sub, s, "a removed subscription still matches")
		}
		require.True(t, r.Remove(other))
		require.Equal(t, 1, r.NodeCount(), "removing every subscription must prune the tree to its root")
	})
}

// Overlap agrees with Match on every pair of the index tests' filters: two
// filters overlap when some topic matches both, and if one does, the
// topic built level by level from their literals (a wildcard's level "w")
// does, at one of the lengths the filters allow.
func TestOverlap(t *testing.T) {
	for _, a := range indexFilters {
		for _, b := range indexFilters {
			want := false
			for _, topic := range candidates(a, b) {
				if bus.Match(a, topic) && bus.Match(b, topic) {
					want = true
				}
			}
			require.Equal(t, want, bus.Overlap(a, b), "Overlap(%q, %q)", a, b)
		}
	}
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"robot/#", "robot/in/#", true},
		{"sensors/+/raw", "robot/+/data", false},
		{"+/x", "x/+", true},
		{"a/+/b", "a/+/c", false},
		{"a/#", "a", true},
		{"#", "$SYS/x", false},
		{"$SYS/#", "$SYS/+", true},
		{"+", "/#", false}, // the empty topic only, which is no topic
		{"+", "+/#", true},
	} {
		require.Equal(t, tc.want, bus.Overlap(tc.a, tc.b), "Overlap(%q, %q)", tc.a, tc.b)
	}
}

// candidates returns, for each length up to one more than the longer
// filter, the topic whose levels are a's literal, else b's, else "w".
func candidates(a, b string) []string {
	la, lb := strings.Split(a, "/"), strings.Split(b, "/")
	level := func(ls []string, i int) string {
		if i < len(ls) && ls[i] != "+" && ls[i] != "#" {
			return ls[i]
		}
		return ""
	}
	var out []string
	for n := 1; n <= max(len(la), len(lb))+1; n++ {
		levels := make([]string, n)
		for i := range levels {
			levels[i] = "w"
			if l := level(la, i); l != "" || (i < len(la) && la[i] == "") {
				levels[i] = l
			} else if l := level(lb, i); l != "" || (i < len(lb) && lb[i] == "") {
				levels[i] = l
			}
		}
		out = append(out, strings.Join(levels, "/"))
	}
	return out
}
