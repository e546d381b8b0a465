package bus_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/bus"
)

func TestPolicyString(t *testing.T) {
	tests := []struct {
		policy bus.Policy
		want   string
	}{
		{bus.DropOldest, "drop_oldest"},
		{bus.DropNewest, "drop_newest"},
		{bus.Block, "block"},
		{bus.Policy(3), "Policy(3)"},
		{bus.Policy(255), "Policy(255)"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			require.Equal(t, tt.want, tt.policy.String())
		})
	}
	require.Equal(t, bus.DropOldest, bus.Policy(0), "the zero policy must be the default, drop_oldest")
}

func TestParsePolicy(t *testing.T) {
	tests := []struct {
		in      string
		want    bus.Policy
		wantErr bool
	}{
		{"drop_oldest", bus.DropOldest, false},
		{"drop_newest", bus.DropNewest, false},
		{"block", bus.Block, false},
		{"", bus.DropOldest, false}, // unset in config: the default
		{"DROP_OLDEST", 0, true},
		{"drop-oldest", 0, true},
		{"keep_last", 0, true},
		{" block", 0, true},
		{"Policy(3)", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := bus.ParsePolicy(tt.in)
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
	for _, p := range []bus.Policy{bus.DropOldest, bus.DropNewest, bus.Block} {
		t.Run(p.String(), func(t *testing.T) {
			got, err := bus.ParsePolicy(p.String())
			require.NoError(t, err)
			require.Equal(t, p, got)
		})
	}
}

func TestReasonString(t *testing.T) {
	tests := []struct {
		reason bus.Reason
		want   string
	}{
		{bus.QueueFull, "queue_full"},
		{bus.Closed, "closed"},
		{bus.TooLarge, "too_large"},
		{bus.Malformed, "malformed"},
		{bus.RateLimited, "rate_limited"},
		{bus.Invalid, "invalid"},
		{bus.Unrouted, "unrouted"},
		{bus.Evicted, "evicted"},
		{bus.Reason(8), "Reason(8)"},
		{bus.Reason(200), "Reason(200)"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			require.Equal(t, tt.want, tt.reason.String())
		})
	}
}

func TestReasons(t *testing.T) {
	var st bus.Stats
	require.Len(t, bus.Reasons, len(st.Dropped), "Reasons must list every index of Stats.Dropped")
	seen := map[string]bool{}
	for i, r := range bus.Reasons {
		require.Equal(t, bus.Reason(i), r, "Reasons must be in order")
		require.NotContains(t, r.String(), "Reason(", "reason %d has no label", i)
		require.False(t, seen[r.String()], "label %q used twice", r)
		seen[r.String()] = true
	}
}

func TestStatsDroppedTotal(t *testing.T) {
	tests := []struct {
		name    string
		dropped map[bus.Reason]uint64
		want    uint64
	}{
		{"none", nil, 0},
		{"one reason", map[bus.Reason]uint64{bus.QueueFull: 3}, 3},
		{"every reason", map[bus.Reason]uint64{
			bus.QueueFull: 1, bus.Closed: 2, bus.TooLarge: 3,
			bus.Malformed: 4, bus.RateLimited: 5, bus.Invalid: 6,
		}, 21},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := bus.Stats{Accepted: 100, Queued: 7}
			for r, n := range tt.dropped {
				st.Dropped[r] = n
			}
			require.Equal(t, tt.want, st.DroppedTotal())
		})
	}
}
