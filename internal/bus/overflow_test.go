package bus_test

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/trace"
)

func TestSubscriptionOverflow(t *testing.T) {
	tests := []struct {
		name         string
		policy       bus.Policy
		depth        int
		deliver      int
		wantAccepted []bool
		wantQueue    []string
		wantSeqs     []uint64
		wantAccepts  []uint64 // Seq of the Accept events
		wantDrops    []uint64 // Seq of the Drop events
	}{
		{
			name: "drop oldest", policy: bus.DropOldest, depth: 3, deliver: 5,
			wantAccepted: []bool{true, true, true, true, true},
			wantQueue:    []string{"2", "3", "4"}, wantSeqs: []uint64{3, 4, 5},
			wantAccepts: []uint64{1, 2, 3, 4, 5}, wantDrops: []uint64{1, 2},
		},
		{
			name: "drop oldest depth one", policy: bus.DropOldest, depth: 1, deliver: 4,
			wantAccepted: []bool{true, true, true, true},
			wantQueue:    []string{"3"}, wantSeqs: []uint64{4},
			wantAccepts: []uint64{1, 2, 3, 4}, wantDrops: []uint64{1, 2, 3},
		},
		{
			name: "drop newest", policy: bus.DropNewest, depth: 3, deliver: 5,
			wantAccepted: []bool{true, true, true, false, false},
			wantQueue:    []string{"0", "1", "2"}, wantSeqs: []uint64{1, 2, 3},
			wantAccepts: []uint64{1, 2, 3}, wantDrops: []uint64{0, 0},
		},
		{
			name: "not full", policy: bus.DropNewest, depth: 3, deliver: 3,
			wantAccepted: []bool{true, true, true},
			wantQueue:    []string{"0", "1", "2"}, wantSeqs: []uint64{1, 2, 3},
			wantAccepts: []uint64{1, 2, 3}, wantDrops: []uint64{},
		},
		{
			name: "block not full", policy: bus.Block, depth: 2, deliver: 2,
			wantAccepted: []bool{true, true},
			wantQueue:    []string{"0", "1"}, wantSeqs: []uint64{1, 2},
			wantAccepts: []uint64{1, 2}, wantDrops: []uint64{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newFixture(t, "s", bus.Options{Depth: tt.depth, Overflow: tt.policy})
			accepted := []bool{}
			for i := range tt.deliver {
				accepted = append(accepted, fx.sub.Deliver(msg("s", strconv.Itoa(i))))
			}
			require.Equal(t, tt.wantAccepted, accepted)

			st := fx.sub.Stats()
			require.Equal(t, uint64(len(tt.wantAccepts)), st.Accepted)
			require.Equal(t, uint64(len(tt.wantDrops)), st.Dropped[bus.QueueFull])
			require.Equal(t, uint64(len(tt.wantDrops)), st.DroppedTotal())
			require.Equal(t, len(tt.wantQueue), st.Queued)

			require.Equal(t, tt.wantAccepts, fx.rec.seqs(trace.Accept))
			require.Equal(t, tt.wantDrops, fx.rec.seqs(trace.Drop))
			for _, r := range fx.rec.reasons() {
				require.Equal(t, "queue_full", r)
			}
			for _, e := range fx.rec.all() {
				require.Equal(t, bus.Entity(fx.sub).ID(), e.ID)
			}

			payloads, seqs := drain(fx.sub)
			require.Equal(t, tt.wantQueue, payloads)
			require.Equal(t, tt.wantSeqs, seqs)
		})
	}
}

// TestDropOldestEventOrder checks that the eviction is reported before the
// message that caused it is accepted, so that a trace never holds more than
// depth messages.
func TestDropOldestEventOrder(t *testing.T) {
	fx := newFixture(t, "s", bus.Options{Depth: 2})
	for i := range 4 {
		fx.sub.Deliver(msg("s", strconv.Itoa(i)))
	}
	var steps []string
	for _, e := range fx.rec.all() {
		if e.Op == trace.Accept || e.Op == trace.Drop {
			steps = append(steps, fmt.Sprintf("%s %d", e.Op, e.Seq))
		}
	}
	require.Equal(t, []string{"accept 1", "accept 2", "drop 1", "accept 3", "drop 2", "accept 4"}, steps)
}

// TestSubscriptionQueueModel runs random deliveries and takes against a
// plain slice model of the queue, for both dropping policies and several
// depths, so that the ring wraps around in every position.
func TestSubscriptionQueueModel(t *testing.T) {
	type entry struct {
		payload string
		seq     uint64
	}
	for _, policy := range []bus.Policy{bus.DropOldest, bus.DropNewest} {
		for _, depth := range []int{1, 2, 3, 7} {
			t.Run(fmt.Sprintf("%s depth %d", policy, depth), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(depth), uint64(policy)))
				fx := newFixture(t, "m", bus.Options{Depth: depth, Overflow: policy})
				var queue []entry
				var seq, accepted, dropped uint64
				wantDrops := []uint64{}
				for i := range 2000 {
					if rng.IntN(10) < 6 {
						p := strconv.Itoa(i)
						ok := fx.sub.Deliver(msg("m", p))
						switch {
						case len(queue) < depth:
							require.True(t, ok)
						case policy == bus.DropOldest:
							require.True(t, ok)
							wantDrops = append(wantDrops, queue[0].seq)
							queue = queue[1:]
							dropped++
						default:
							require.False(t, ok)
							wantDrops = append(wantDrops, 0)
							dropped++
						}
						if ok {
							seq++
							accepted++
							queue = append(queue, entry{p, seq})
						}
						continue
					}
					m, gotSeq, ok, more := bus.Take(fx.sub)
					require.Equal(t, len(queue) > 0, ok)
					if ok {
						require.Equal(t, queue[0].payload, string(m.Payload), "op %d", i)
						require.Equal(t, queue[0].seq, gotSeq)
						queue = queue[1:]
					}
					require.Equal(t, len(queue) > 0, more)
					require.Equal(t, len(queue), fx.sub.Len())
				}
				st := fx.sub.Stats()
				require.Equal(t, accepted, st.Accepted)
				require.Equal(t, dropped, st.Dropped[bus.QueueFull])
				require.Equal(t, len(queue), st.Queued)
				require.Equal(t, wantDrops, fx.rec.seqs(trace.Drop))
			})
		}
	}
}
