package bus_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/trace"
)

// Two publishers and a run that claims, takes a random number of its
// claim's messages, now and then slowly, and gives the rest back, under
// every policy, small depths and random seeds: every accepted message is
// taken once or dropped once, never both, and the run takes them whole and
// in order.
func TestClaimsUnderConcurrentPublishers(t *testing.T) {
	const publishers, each = 2, 2000
	for _, policy := range []bus.Policy{bus.DropOldest, bus.DropNewest, bus.Block} {
		for seed := range uint64(6) {
			t.Run(fmt.Sprintf("%v/seed=%d", policy, seed), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(seed, 7))
				depth := 1 + rng.IntN(6)
				fx := newFixture(t, "c", bus.Options{Depth: depth, Overflow: policy})
				var wg sync.WaitGroup
				for p := range publishers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := range each {
							fx.sub.Deliver(msg("c", fmt.Sprintf("%d:%d", p, i)))
						}
					}()
				}
				done := make(chan struct{})
				go func() { wg.Wait(); close(done) }()
				taken := consumeWithClaims(t, fx.sub, rng, done)

				st := fx.sub.Stats()
				full := st.Dropped[bus.QueueFull]
				if policy == bus.DropNewest {
					// Refused: never accepted.
					require.EqualValues(t, publishers*each, st.Accepted+full)
					full = 0
				}
				require.EqualValues(t, st.Accepted, uint64(len(taken))+full, "accepted = taken + dropped")
				dropped := map[uint64]bool{}
				for _, ev := range fx.rec.ops(trace.Drop) {
					if ev.Seq != 0 {
						require.False(t, dropped[ev.Seq], "seq %d dropped twice", ev.Seq)
						dropped[ev.Seq] = true
					}
				}
				for i, seq := range taken {
					require.False(t, dropped[seq], "seq %d taken and dropped", seq)
					if i > 0 {
						require.Greater(t, seq, taken[i-1], "taken in order")
					}
				}
			})
		}
	}
}

// consumeWithClaims serves sub as a run would, in claims of random sizes
// of which it takes a random part, until done is closed and the queue is
// empty, and returns the sequence numbers it took. It checks that each
// publisher's messages come whole and in order.
func consumeWithClaims(t *testing.T, sub *bus.Subscription, rng *rand.Rand, done chan struct{}) []uint64 {
	var taken []uint64
	last := map[int]int{0: -1, 1: -1}
	var c bus.Claim
	for {
		k, _ := bus.ClaimFront(sub, 1+rng.IntN(8), &c)
		if k == 0 {
			select {
			case <-done:
				if sub.Len() == 0 {
					return taken
				}
			default:
			}
			continue
		}
		for range rng.IntN(k + 1) {
			var m bus.Message
			seq, ok := c.Next(&m)
			if !ok {
				break
			}
			taken = append(taken, seq)
			var p, i int
			_, err := fmt.Sscanf(string(m.Payload), "%d:%d", &p, &i)
			require.NoError(t, err, "payload %q", m.Payload)
			require.Greater(t, i, last[p], "publisher %d's messages in order", p)
			last[p] = i
			if rng.IntN(8) == 0 {
				// A slow callback: the publishers fill the queue and
				// drop meanwhile.
				for range rng.IntN(200) {
					runtime.Gosched()
				}
			}
		}
		bus.Release(sub, &c, 0)
	}
}
