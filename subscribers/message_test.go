package subscribers_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/subscribers"
)

func TestPolicyString(t *testing.T) {
	tests := []struct {
		policy subscribers.Policy
		want   string
	}{
		{subscribers.DropOldest, "drop_oldest"},
		{subscribers.DropNewest, "drop_newest"},
		{subscribers.Block, "block"},
		{subscribers.Policy(3), "Policy(3)"},
		{subscribers.Policy(255), "Policy(255)"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			require.Equal(t, tt.want, tt.policy.String())
		})
	}
	require.Equal(t, subscribers.DropOldest, subscribers.Policy(0), "the zero policy must be the default, drop_oldest")
}

func TestParsePolicy(t *testing.T) {
	tests := []struct {
		in      string
		want    subscribers.Policy
		wantErr bool
	}{
		{"drop_oldest", subscribers.DropOldest, false},
		{"drop_newest", subscribers.DropNewest, false},
		{"block", subscribers.Block, false},
		{"", subscribers.DropOldest, false}, // unset in config: the default
		{"DROP_OLDEST", 0, true},
		{"drop-oldest", 0, true},
		{"keep_last", 0, true},
		{" block", 0, true},
		{"Policy(3)", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := subscribers.ParsePolicy(tt.in)
			if tt.wantErr {
				require.Error(t, err)
				require.Contains(t, err.Error(), "subscribers: overflow")
				require.Contains(t, err.Error(), `"`+tt.in+`"`, "the error must name the value")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestPolicyRoundTrip(t *testing.T) {
	for _, p := range []subscribers.Policy{subscribers.DropOldest, subscribers.DropNewest, subscribers.Block} {
		t.Run(p.String(), func(t *testing.T) {
			got, err := subscribers.ParsePolicy(p.String())
			require.NoError(t, err)
			require.Equal(t, p, got)
		})
	}
}

func TestReasonString(t *testing.T) {
	tests := []struct {
		reason subscribers.Reason
		want   string
	}{
		{subscribers.QueueFull, "queue_full"},
		{subscribers.Closed, "closed"},
		{subscribers.TooLarge, "too_large"},
		{subscribers.Malformed, "malformed"},
		{subscribers.RateLimited, "rate_limited"},
		{subscribers.Invalid, "invalid"},
		{subscribers.Unrouted, "unrouted"},
		{subscribers.Evicted, "evicted"},
		{subscribers.Reason(8), "Reason(8)"},
		{subscribers.Reason(200), "Reason(200)"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			require.Equal(t, tt.want, tt.reason.String())
		})
	}
}

func TestReasons(t *testing.T) {
	var st subscribers.Stats
	require.Len(t, subscribers.Reasons, len(st.Dropped), "Reasons must list every index of Stats.Dropped")
	seen := map[string]bool{}
	for i, r := range subscribers.Reasons {
		require.Equal(t, subscribers.Reason(i), r, "Reasons must be in order")
		require.NotContains(t, r.String(), "Reason(", "reason %d has no label", i)
		require.False(t, seen[r.String()], "label %q used twice", r)
		seen[r.String()] = true
	}
}

func TestStatsDroppedTotal(t *testing.T) {
	tests := []struct {
		name    string
		dropped map[subscribers.Reason]uint64
		want    uint64
	}{
		{"none", nil, 0},
		{"one reason", map[subscribers.Reason]uint64{subscribers.QueueFull: 3}, 3},
		{"every reason", map[subscribers.Reason]uint64{
			subscribers.QueueFull: 1, subscribers.Closed: 2, subscribers.TooLarge: 3,
			subscribers.Malformed: 4, subscribers.RateLimited: 5, subscribers.Invalid: 6,
		}, 21},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := subscribers.Stats{Accepted: 100, Queued: 7}
			for r, n := range tt.dropped {
				st.Dropped[r] = n
			}
			require.Equal(t, tt.want, st.DroppedTotal())
		})
	}
}
