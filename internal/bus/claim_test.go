package bus_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/trace"
)

// fill delivers the payloads to sub in order.
func fill(t *testing.T, sub *bus.Subscription, payloads ...string) {
	t.Helper()
	for _, p := range payloads {
		require.True(t, sub.Deliver(msg("c", p)))
	}
}

// takeClaimed takes up to n messages of c and returns their payloads and
// sequence numbers.
func takeClaimed(c *bus.Claim, n int) (payloads []string, seqs []uint64) {
	for range n {
		var m bus.Message
		seq, ok := c.Next(&m)
		if !ok {
			break
		}
		seqs = append(seqs, seq)
		payloads = append(payloads, string(m.Payload))
	}
	return payloads, seqs
}

// A run that ends before serving all it claimed gives the rest back to
// the front of the queue, in order, behind nothing that came meanwhile.
func TestClaimGivesBackWhatItDidNotServe(t *testing.T) {
	sub := newSub(t, "c", bus.Options{Depth: 8, Overflow: bus.Block})
	fill(t, sub, "1", "2", "3", "4", "5")
	var c bus.Claim
	k, more := bus.ClaimFront(sub, 4, &c)
	require.Equal(t, 4, k)
	require.True(t, more, "5 is queued behind the claim")
	require.Equal(t, 5, sub.Len(), "claimed messages count until taken")

	payloads, seqs := takeClaimed(&c, 2)
	require.Equal(t, []string{"1", "2"}, payloads)
	require.Equal(t, []uint64{1, 2}, seqs)
	require.Equal(t, 3, sub.Len())
	fill(t, sub, "6")

	k, more = bus.Release(sub, &c, 0)
	require.Zero(t, k)
	require.True(t, more)
	payloads, seqs = drain(sub)
	require.Equal(t, []string{"3", "4", "5", "6"}, payloads)
	require.Equal(t, []uint64{3, 4, 5, 6}, seqs)
}

// Release with want claims the next messages at once, including those
// published while the first claim was served.
func TestReleaseClaimsTheNext(t *testing.T) {
	sub := newSub(t, "c", bus.Options{Depth: 8, Overflow: bus.Block})
	fill(t, sub, "1", "2")
	var c bus.Claim
	k, more := bus.ClaimFront(sub, 8, &c)
	require.Equal(t, 2, k)
	require.False(t, more)
	takeClaimed(&c, 2)
	fill(t, sub, "3", "4", "5")
	k, more = bus.Release(sub, &c, 2)
	require.Equal(t, 2, k)
	require.True(t, more)
	payloads, seqs := takeClaimed(&c, 2)
	require.Equal(t, []string{"3", "4"}, payloads)
	require.Equal(t, []uint64{3, 4}, seqs)
	k, more = bus.Release(sub, &c, 8)
	require.Equal(t, 1, k)
	require.False(t, more)
	payloads, _ = takeClaimed(&c, 1)
	require.Equal(t, []string{"5"}, payloads)
	k, more = bus.Release(sub, &c, 8)
	require.Zero(t, k)
	require.False(t, more)
	require.Zero(t, sub.Len())
}

// The depth counts claimed messages until they are taken, as it counts
// queued ones: a drop_newest queue refuses a message while its claim fills
// it, and takes one once a claimed message is taken.
func TestClaimedMessagesCountTowardTheDepth(t *testing.T) {
	fx := newFixture(t, "c", bus.Options{Depth: 3, Overflow: bus.DropNewest})
	fill(t, fx.sub, "1", "2", "3")
	var c bus.Claim
	k, _ := bus.ClaimFront(fx.sub, 3, &c)
	require.Equal(t, 3, k)
	require.False(t, fx.sub.Deliver(msg("c", "refused")))
	takeClaimed(&c, 1)
	require.True(t, fx.sub.Deliver(msg("c", "4")))
	require.False(t, fx.sub.Deliver(msg("c", "refused")))
	bus.Release(fx.sub, &c, 0)
	payloads, seqs := drain(fx.sub)
	require.Equal(t, []string{"2", "3", "4"}, payloads)
	require.Equal(t, []uint64{2, 3, 4}, seqs)
	require.Len(t, fx.rec.ops(trace.Drop), 2)
}

// A Block producer waiting for room resumes once the run's takes leave
// the queue half empty, before the run releases its claim.
func TestClaimTakesReleaseBlockedProducers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sub := newSub(t, "c", bus.Options{Depth: 4, Overflow: bus.Block})
		fill(t, sub, "1", "2", "3", "4")
		var c bus.Claim
		bus.ClaimFront(sub, 4, &c)
		done := make(chan bool, 1)
		go func() { done <- sub.Deliver(msg("c", "5")) }()
		synctest.Wait()
		takeClaimed(&c, 1)
		synctest.Wait()
		require.Empty(t, done, "three left: more than half the depth")
		takeClaimed(&c, 1)
		synctest.Wait()
		require.Len(t, done, 1, "two left: half the depth")
		require.True(t, <-done)
		takeClaimed(&c, 2)
		bus.Release(sub, &c, 0)
		payloads, _ := drain(sub)
		require.Equal(t, []string{"5"}, payloads)
	})
}

// A callback's publication past the depth grows the ring while a claim is
// out; the claim's unserved messages go back to the front of the new
// ring, ahead of everything queued.
func TestClaimGivenBackAfterTheRingGrew(t *testing.T) {
	r := new(bus.Router)
	sub := newSub(t, "c", bus.Options{Depth: 2, Overflow: bus.Block})
	require.NoError(t, r.Attach(sub))
	pub, err := r.Publisher("c")
	require.NoError(t, err)
	fill(t, sub, "1", "2")
	var c bus.Claim
	k, _ := bus.ClaimFront(sub, 2, &c)
	require.Equal(t, 2, k)
	for _, p := range []string{"3", "4", "5"} {
		// A callback's publication (under a run) goes past the depth.
		run := (&bus.RunScope{Stop: context.Background()}).NewRun()
		_, err := pub.PublishMessage(run, bus.Message{Payload: []byte(p)})
		require.NoError(t, err)
		run.End()
	}
	takeClaimed(&c, 1)
	bus.Release(sub, &c, 0)
	payloads, seqs := drain(sub)
	require.Equal(t, []string{"2", "3", "4", "5"}, payloads)
	require.Equal(t, []uint64{2, 3, 4, 5}, seqs)
}

// A drop_oldest publisher at the depth drops the oldest message not taken,
// claimed or not: the run skips the claimed ones it dropped, and what the
// queue keeps is the newest messages, in order.
func TestDropOldestDropsFromTheClaim(t *testing.T) {
	fx := newFixture(t, "c", bus.Options{Depth: 4, Overflow: bus.DropOldest})
	fill(t, fx.sub, "1", "2", "3", "4")
	var c bus.Claim
	k, _ := bus.ClaimFront(fx.sub, 3, &c)
	require.Equal(t, 3, k)
	payloads, _ := takeClaimed(&c, 1)
	require.Equal(t, []string{"1"}, payloads)
	// Full again: 2, 3 (claimed), 4, 5. Then 6 and 7 drop 2 and 3, which
	// the run has not taken, and 8 drops 4, behind the claim.
	fill(t, fx.sub, "5", "6", "7", "8")
	require.Equal(t, 4, fx.sub.Len())
	_, ok := c.Next(&bus.Message{})
	require.False(t, ok, "the rest of the claim was dropped")
	k, more := bus.Release(fx.sub, &c, 8)
	require.Equal(t, 4, k)
	require.False(t, more)
	payloads, seqs := takeClaimed(&c, 8)
	require.Equal(t, []string{"5", "6", "7", "8"}, payloads)
	require.Equal(t, []uint64{5, 6, 7, 8}, seqs)
	bus.Release(fx.sub, &c, 0)
	var dropped []uint64
	for _, ev := range fx.rec.ops(trace.Drop) {
		dropped = append(dropped, ev.Seq)
	}
	require.Equal(t, []uint64{2, 3, 4}, dropped)
}

// What a run gives back of a claim a drop_oldest publisher dropped from
// goes back behind the dropped messages, ahead of the queue, and the
// slots the dropped ones kept make the ring grow rather than be written.
func TestDropOldestGiveBackAfterDrops(t *testing.T) {
	fx := newFixture(t, "c", bus.Options{Depth: 4, Overflow: bus.DropOldest})
	fill(t, fx.sub, "1", "2", "3", "4")
	var c bus.Claim
	bus.ClaimFront(fx.sub, 4, &c)
	takeClaimed(&c, 1)
	fill(t, fx.sub, "5", "6", "7") // 5 fills the queue, 6 and 7 drop 2 and 3
	bus.Release(fx.sub, &c, 0)
	payloads, seqs := drain(fx.sub)
	require.Equal(t, []string{"4", "5", "6", "7"}, payloads)
	require.Equal(t, []uint64{4, 5, 6, 7}, seqs)
	require.Len(t, fx.rec.ops(trace.Drop), 2)
}

// A run's first look takes a lone message as TakeInto does, with no claim
// to release, and claims when more are queued.
func TestTakeOrClaim(t *testing.T) {
	sub := newSub(t, "c", bus.Options{Depth: 8, Overflow: bus.Block})
	var c bus.Claim
	var m bus.Message
	_, took, k, _ := bus.TakeOrClaim(sub, 8, &c, &m)
	require.False(t, took)
	require.Zero(t, k, "an empty queue")

	fill(t, sub, "1")
	seq, took, k, more := bus.TakeOrClaim(sub, 8, &c, &m)
	require.True(t, took)
	require.Zero(t, k)
	require.False(t, more)
	require.Equal(t, "1", string(m.Payload))
	require.Equal(t, uint64(1), seq)
	require.Zero(t, sub.Len())

	fill(t, sub, "2", "3", "4")
	_, took, k, more = bus.TakeOrClaim(sub, 2, &c, &m)
	require.False(t, took)
	require.Equal(t, 2, k)
	require.True(t, more)
	payloads, seqs := takeClaimed(&c, 2)
	require.Equal(t, []string{"2", "3"}, payloads)
	require.Equal(t, []uint64{2, 3}, seqs)
	bus.Release(sub, &c, 0)

	_, took, _, _ = bus.TakeOrClaim(sub, 1, &c, &m)
	require.True(t, took, "a run of one message takes it")
	require.Equal(t, "4", string(m.Payload))
}
