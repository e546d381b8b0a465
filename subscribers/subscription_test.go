package subscribers_test

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/waitset"
)

func TestNew(t *testing.T) {
	tests := []struct {
		name   string
		filter string
		opts   subscribers.Options
		want   subscribers.Options
	}{
		{"defaults", "a/b", subscribers.Options{}, subscribers.Options{Depth: subscribers.DefaultDepth, Threshold: subscribers.DefaultDepth}},
		{"depth one", "a/#", subscribers.Options{Depth: 1}, subscribers.Options{Depth: 1, Threshold: 1}},
		{"drop newest", "#", subscribers.Options{Depth: 5, Overflow: subscribers.DropNewest}, subscribers.Options{Depth: 5, Overflow: subscribers.DropNewest, Threshold: 5}},
		{"block", "+", subscribers.Options{Overflow: subscribers.Block}, subscribers.Options{Depth: subscribers.DefaultDepth, Overflow: subscribers.Block, Threshold: subscribers.DefaultDepth}},
		{"threshold", "+", subscribers.Options{Depth: 8, Threshold: 4}, subscribers.Options{Depth: 8, Threshold: 4}},
		{"threshold above depth", "+", subscribers.Options{Depth: 8, Threshold: 40}, subscribers.Options{Depth: 8, Threshold: 8}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sub, err := subscribers.New(tt.filter, tt.opts)
			require.NoError(t, err)
			require.Equal(t, tt.filter, sub.Filter())
			require.Equal(t, tt.want, sub.Options())
			require.Zero(t, sub.Len())
			require.False(t, sub.Closed())
			require.Equal(t, subscribers.Stats{}, sub.Stats())
			require.Nil(t, sub.Set(), "New must not register the subscription")
		})
	}
	require.Equal(t, 10, subscribers.DefaultDepth)

	_, err := subscribers.New("a/+", subscribers.Options{Depth: -3})
	require.ErrorContains(t, err, `"a/+": depth -3 is negative`)
	_, err = subscribers.New("a/+", subscribers.Options{Threshold: -1})
	require.ErrorContains(t, err, `"a/+": threshold -1 is negative`)
}

func TestNewInvalidFilter(t *testing.T) {
	for _, filter := range []string{"", "a/#/b", "a+", "a\x00"} {
		t.Run(strconv.Quote(filter), func(t *testing.T) {
			sub, err := subscribers.New(filter, subscribers.Options{})
			require.Error(t, err)
			require.Nil(t, sub)
			require.Contains(t, err.Error(), strconv.Quote(filter))
		})
	}
}

// TestDefaultDepth checks that a subscription without a depth really holds
// DefaultDepth messages.
func TestDefaultDepth(t *testing.T) {
	sub := newSub(t, "a", subscribers.Options{Overflow: subscribers.DropNewest})
	for i := range subscribers.DefaultDepth {
		require.True(t, sub.Deliver(msg("a", strconv.Itoa(i))), "message %d", i)
	}
	require.False(t, sub.Deliver(msg("a", "over")))
	require.Equal(t, subscribers.DefaultDepth, sub.Len())
}

func TestSubscriptionFIFO(t *testing.T) {
	for _, depth := range []int{1, 3, 10, 64} {
		t.Run(fmt.Sprint("depth ", depth), func(t *testing.T) {
			fx := newFixture(t, "a/+", subscribers.Options{Depth: depth, Overflow: subscribers.DropNewest})
			// Several rounds so that the ring wraps around.
			next, want := 0, 0
			for round := range 5 {
				n := 1 + (round*7)%depth
				for range n {
					require.True(t, fx.sub.Deliver(msg("a/b", strconv.Itoa(next))))
					next++
				}
				for i := range n {
					m, seq, ok, more := fx.sub.Take()
					require.True(t, ok)
					require.Equal(t, strconv.Itoa(want), string(m.Payload))
					require.Equal(t, "a/b", m.Topic)
					require.Equal(t, uint64(want+1), seq, "sequence numbers count accepted messages from 1")
					require.Equal(t, i < n-1, more)
					want++
				}
			}
			require.Equal(t, uint64(next), fx.sub.Stats().Accepted)
		})
	}
}

func TestSubscriptionTake(t *testing.T) {
	tests := []struct {
		name      string
		delivered int
		takes     []bool // ok of each Take; more is true unless it is the last ok
	}{
		{"empty", 0, []bool{false, false}},
		{"one", 1, []bool{true, false}},
		{"three", 3, []bool{true, true, true, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sub := newSub(t, "t", subscribers.Options{})
			for i := range tt.delivered {
				sub.Deliver(subscribers.Message{Topic: "t", Payload: []byte{byte(i)}, QoS: 1, Retained: true, Received: time.Unix(int64(i), 0)})
			}
			for i, wantOK := range tt.takes {
				m, seq, ok, more := sub.Take()
				require.Equal(t, wantOK, ok, "take %d", i)
				if !wantOK {
					require.Equal(t, subscribers.Message{}, m)
					require.Zero(t, seq)
					require.False(t, more)
					continue
				}
				// The message comes back exactly as delivered.
				require.Equal(t, subscribers.Message{Topic: "t", Payload: []byte{byte(i)}, QoS: 1, Retained: true, Received: time.Unix(int64(i), 0)}, m)
				require.Equal(t, uint64(i+1), seq)
				require.Equal(t, i < tt.delivered-1, more)
				require.Equal(t, tt.delivered-i-1, sub.Len())
			}
		})
	}
}

func TestSubscriptionOverflow(t *testing.T) {
	tests := []struct {
		name         string
		policy       subscribers.Policy
		depth        int
		deliver      int
		wantAccepted []bool
		wantQueue    []string
		wantSeqs     []uint64
		wantAccepts  []uint64 // Seq of the Accept events
		wantDrops    []uint64 // Seq of the Drop events
	}{
		{
			name: "drop oldest", policy: subscribers.DropOldest, depth: 3, deliver: 5,
			wantAccepted: []bool{true, true, true, true, true},
			wantQueue:    []string{"2", "3", "4"}, wantSeqs: []uint64{3, 4, 5},
			wantAccepts: []uint64{1, 2, 3, 4, 5}, wantDrops: []uint64{1, 2},
		},
		{
			name: "drop oldest depth one", policy: subscribers.DropOldest, depth: 1, deliver: 4,
			wantAccepted: []bool{true, true, true, true},
			wantQueue:    []string{"3"}, wantSeqs: []uint64{4},
			wantAccepts: []uint64{1, 2, 3, 4}, wantDrops: []uint64{1, 2, 3},
		},
		{
			name: "drop newest", policy: subscribers.DropNewest, depth: 3, deliver: 5,
			wantAccepted: []bool{true, true, true, false, false},
			wantQueue:    []string{"0", "1", "2"}, wantSeqs: []uint64{1, 2, 3},
			wantAccepts: []uint64{1, 2, 3}, wantDrops: []uint64{0, 0},
		},
		{
			name: "not full", policy: subscribers.DropNewest, depth: 3, deliver: 3,
			wantAccepted: []bool{true, true, true},
			wantQueue:    []string{"0", "1", "2"}, wantSeqs: []uint64{1, 2, 3},
			wantAccepts: []uint64{1, 2, 3}, wantDrops: []uint64{},
		},
		{
			name: "block not full", policy: subscribers.Block, depth: 2, deliver: 2,
			wantAccepted: []bool{true, true},
			wantQueue:    []string{"0", "1"}, wantSeqs: []uint64{1, 2},
			wantAccepts: []uint64{1, 2}, wantDrops: []uint64{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newFixture(t, "s", subscribers.Options{Depth: tt.depth, Overflow: tt.policy})
			accepted := []bool{}
			for i := range tt.deliver {
				accepted = append(accepted, fx.sub.Deliver(msg("s", strconv.Itoa(i))))
			}
			require.Equal(t, tt.wantAccepted, accepted)

			st := fx.sub.Stats()
			require.Equal(t, uint64(len(tt.wantAccepts)), st.Accepted)
			require.Equal(t, uint64(len(tt.wantDrops)), st.Dropped[subscribers.QueueFull])
			require.Equal(t, uint64(len(tt.wantDrops)), st.DroppedTotal())
			require.Equal(t, len(tt.wantQueue), st.Queued)

			require.Equal(t, tt.wantAccepts, fx.rec.seqs(waitset.Accept))
			require.Equal(t, tt.wantDrops, fx.rec.seqs(waitset.Drop))
			for _, r := range fx.rec.reasons() {
				require.Equal(t, "queue_full", r)
			}
			for _, e := range fx.rec.all() {
				require.Same(t, &fx.sub.Entity, e.Entity)
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
	fx := newFixture(t, "s", subscribers.Options{Depth: 2})
	for i := range 4 {
		fx.sub.Deliver(msg("s", strconv.Itoa(i)))
	}
	var trace []string
	for _, e := range fx.rec.all() {
		if e.Op == waitset.Accept || e.Op == waitset.Drop {
			trace = append(trace, fmt.Sprintf("%s %d", e.Op, e.Seq))
		}
	}
	require.Equal(t, []string{"accept 1", "accept 2", "drop 1", "accept 3", "drop 2", "accept 4"}, trace)
}

// TestSubscriptionQueueModel runs random deliveries and takes against a
// plain slice model of the queue, for both dropping policies and several
// depths, so that the ring wraps around in every position.
func TestSubscriptionQueueModel(t *testing.T) {
	type entry struct {
		payload string
		seq     uint64
	}
	for _, policy := range []subscribers.Policy{subscribers.DropOldest, subscribers.DropNewest} {
		for _, depth := range []int{1, 2, 3, 7} {
			t.Run(fmt.Sprintf("%s depth %d", policy, depth), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(depth), uint64(policy)))
				fx := newFixture(t, "m", subscribers.Options{Depth: depth, Overflow: policy})
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
						case policy == subscribers.DropOldest:
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
					m, gotSeq, ok, more := fx.sub.Take()
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
				require.Equal(t, dropped, st.Dropped[subscribers.QueueFull])
				require.Equal(t, len(queue), st.Queued)
				require.Equal(t, wantDrops, fx.rec.seqs(waitset.Drop))
			})
		}
	}
}

// TestSubscriptionTrigger walks a subscription through the channel states of
// seed 003, with the test as the scheduler and the worker: dormant (waiting,
// empty), ready (in the wait set), in progress (running).
func TestSubscriptionTrigger(t *testing.T) {
	fx := newFixture(t, "s", subscribers.Options{})
	sub, set, e := fx.sub, fx.set, &fx.sub.Entity
	ready := func() int { return len(fx.rec.ops(waitset.Ready)) }

	// Dormant.
	require.True(t, set.Empty())
	require.False(t, e.InWaitSet())
	require.Equal(t, waitset.Waiting, e.State())

	// The first delivery makes it ready.
	require.True(t, sub.Deliver(msg("s", "1")))
	require.False(t, set.Empty())
	require.True(t, e.InWaitSet())
	require.Equal(t, 1, ready())

	// A delivery while ready adds work, not a second entry.
	require.True(t, sub.Deliver(msg("s", "2")))
	require.Equal(t, 1, ready())

	var runq waitset.List
	n, batch := set.Take(&runq)
	require.Equal(t, 1, n)
	require.Equal(t, uint64(1), batch)
	require.Same(t, e, runq.Pop())
	require.Equal(t, waitset.Queued, e.State())
	require.True(t, set.Empty())

	// A delivery to a non-empty queue while queued changes nothing (seed
	// 003: only a delivery to a dormant subscription does): it is not pushed,
	// so it cannot be taken twice, and its run will find the message.
	require.True(t, sub.Deliver(msg("s", "3")))
	require.True(t, set.Empty())
	require.False(t, e.InWaitSet())

	// In progress: one message per run, from the front.
	e.Start()
	m, _, ok, more := sub.Take()
	require.True(t, ok)
	require.True(t, more)
	require.Equal(t, "1", string(m.Payload))
	require.True(t, sub.Deliver(msg("s", "4")))
	require.True(t, set.Empty(), "a delivery while running must not make it ready")
	require.Equal(t, 1, ready())

	// Work left: back to ready at the end of the run.
	require.True(t, e.Finish(more))
	require.False(t, set.Empty())
	require.Equal(t, 2, ready())

	var rest []string
	for {
		runq = waitset.List{}
		if n, _ := set.Take(&runq); n == 0 {
			break
		}
		require.Same(t, e, runq.Pop())
		e.Start()
		m, _, ok, more := sub.Take()
		require.True(t, ok)
		rest = append(rest, string(m.Payload))
		e.Finish(more)
	}
	require.Equal(t, []string{"2", "3", "4"}, rest)

	// Dormant again.
	require.True(t, set.Empty())
	require.False(t, e.InWaitSet())
	require.Equal(t, waitset.Waiting, e.State())
	require.Zero(t, sub.Len())
	require.Equal(t, []uint64{1, 2, 3, 4}, fx.rec.seqs(waitset.Accept))
}

// runAll plays a single worker: it takes batches from set into a FIFO run
// queue and runs one message per run until every subscription is dormant.
// It returns the payloads in the order they ran.
func runAll(t *testing.T, set *waitset.Set) []string {
	t.Helper()
	var runq waitset.List
	var out []string
	for {
		if runq.Len() == 0 {
			if n, _ := set.Take(&runq); n == 0 {
				return out
			}
		}
		e := runq.Pop()
		sub := e.Data.(*subscribers.Subscription)
		e.Start()
		m, _, ok, more := sub.Take()
		require.True(t, ok, "a ready subscription must have work")
		out = append(out, string(m.Payload))
		e.Finish(more)
	}
}

// TestSubscriptionFairness checks the seed's EndWorkMoreToDo: a subscription
// with more work goes to the back of the ready queue, behind those already
// ready, so that one busy subscription does not starve the others.
func TestSubscriptionFairness(t *testing.T) {
	set := waitset.New(nil, nil)
	subs := map[string]*subscribers.Subscription{}
	for _, name := range []string{"a", "b", "c"} {
		sub, err := subscribers.New(name, subscribers.Options{})
		require.NoError(t, err)
		sub.Data = sub
		set.Register(&sub.Entity, waitset.Subscription)
		subs[name] = sub
	}
	for _, p := range []string{"a1", "b1", "c1", "a2", "c2", "a3"} {
		require.True(t, subs[p[:1]].Deliver(msg(p[:1], p)))
	}
	require.Equal(t, []string{"a1", "b1", "c1", "a2", "c2", "a3"}, runAll(t, set))
	for _, sub := range subs {
		require.Zero(t, sub.Len())
		require.False(t, sub.InWaitSet())
	}
}

// TestBlockWaitsForRoom proves with synctest that a Block producer waits
// while the queue is full: synctest.Wait returns only once the producer is
// durably blocked (in sync.Cond.Wait), so no sleep is involved.
func TestBlockWaitsForRoom(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fx := newFixture(t, "b", subscribers.Options{Depth: 2, Overflow: subscribers.Block})
		require.True(t, fx.sub.Deliver(msg("b", "1")))
		require.True(t, fx.sub.Deliver(msg("b", "2")))

		done := make(chan bool, 1)
		go func() { done <- fx.sub.Deliver(msg("b", "3")) }()
		synctest.Wait()
		select {
		case <-done:
			require.FailNow(t, "Deliver returned although the queue was full")
		default:
		}
		require.Equal(t, 2, fx.sub.Len())
		require.Empty(t, fx.rec.ops(waitset.Drop), "Block must not drop")

		m, seq, ok, more := fx.sub.Take()
		require.True(t, ok)
		require.True(t, more)
		require.Equal(t, "1", string(m.Payload))
		require.Equal(t, uint64(1), seq)

		synctest.Wait()
		select {
		case accepted := <-done:
			require.True(t, accepted)
		default:
			require.FailNow(t, "Take did not release the waiting producer")
		}
		payloads, seqs := drain(fx.sub)
		require.Equal(t, []string{"2", "3"}, payloads)
		require.Equal(t, []uint64{2, 3}, seqs)
		st := fx.sub.Stats()
		require.Equal(t, uint64(3), st.Accepted)
		require.Zero(t, st.DroppedTotal())
	})
}

// TestBlockReleasesOneProducerPerSlot checks that each Take lets exactly one
// waiting producer in, and that they are all accepted in the end.
func TestBlockReleasesOneProducerPerSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sub := newSub(t, "b", subscribers.Options{Depth: 1, Overflow: subscribers.Block})
		require.True(t, sub.Deliver(msg("b", "first")))
		const producers = 4
		done := make(chan string, producers)
		for i := range producers {
			p := fmt.Sprint("p", i)
			go func() {
				if sub.Deliver(msg("b", p)) {
					done <- p
				} else {
					done <- "refused " + p
				}
			}()
		}
		synctest.Wait()
		require.Empty(t, done)

		got := map[string]bool{}
		taken := []string{}
		for i := range producers {
			m, _, ok, _ := sub.Take()
			require.True(t, ok)
			taken = append(taken, string(m.Payload))
			synctest.Wait()
			require.Len(t, done, 1, "take %d must release exactly one producer", i)
			p := <-done
			require.False(t, strings.HasPrefix(p, "refused"), p)
			got[p] = true
			require.Equal(t, 1, sub.Len())
		}
		m, _, ok, more := sub.Take()
		require.True(t, ok)
		require.False(t, more)
		taken = append(taken, string(m.Payload))
		require.Len(t, got, producers)
		require.Equal(t, "first", taken[0])
		require.ElementsMatch(t, []string{"p0", "p1", "p2", "p3"}, taken[1:])
		require.Zero(t, sub.Stats().DroppedTotal())
	})
}

// TestBlockRealScheduler is TestBlockWaitsForRoom without synctest, on the
// real scheduler: the timed select is only a negative check (it can let a
// broken Block pass on a very slow machine, but never fails a correct one).
func TestBlockRealScheduler(t *testing.T) {
	sub := newSub(t, "b", subscribers.Options{Depth: 1, Overflow: subscribers.Block})
	require.True(t, sub.Deliver(msg("b", "1")))
	done := make(chan bool, 1)
	go func() { done <- sub.Deliver(msg("b", "2")) }()
	select {
	case <-done:
		require.FailNow(t, "Deliver returned although the queue was full")
	case <-time.After(20 * time.Millisecond):
	}
	_, _, ok, _ := sub.Take()
	require.True(t, ok)
	select {
	case accepted := <-done:
		require.True(t, accepted)
	case <-time.After(10 * time.Second): // a failure bound only
		require.FailNow(t, "Take did not release the waiting producer")
	}
	m, _, ok, _ := sub.Take()
	require.True(t, ok)
	require.Equal(t, "2", string(m.Payload))
}

// TestBlockManyProducers runs producers against a small Block queue and a
// consumer that behaves like an executor worker, woken through the wait
// set: nothing is lost, nothing dropped, and each producer's messages stay
// in order.
func TestBlockManyProducers(t *testing.T) {
	const producers, each = 4, 300
	wake := make(chan struct{}, 1)
	set := waitset.New(func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	}, nil)
	sub, err := subscribers.New("load/+", subscribers.Options{Depth: 2, Overflow: subscribers.Block})
	require.NoError(t, err)
	set.Register(&sub.Entity, waitset.Subscription)
	t.Cleanup(sub.Close) // releases the producers if the test fails early

	errs := make(chan error, producers)
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			for i := range each {
				if !sub.Deliver(msg("load/x", fmt.Sprintf("%d:%d", p, i))) {
					errs <- fmt.Errorf("producer %d: message %d refused", p, i)
					return
				}
			}
		})
	}

	next := make([]int, producers)
	var runq waitset.List
	deadline := time.After(20 * time.Second) // a failure bound only
	for got := 0; got < producers*each; {
		if runq.Len() == 0 {
			if n, _ := set.Take(&runq); n == 0 {
				select {
				case <-wake:
				case err := <-errs:
					require.NoError(t, err)
				case <-deadline:
					require.FailNow(t, "no progress: a trigger was lost", "got %d of %d", got, producers*each)
				}
				continue
			}
		}
		e := runq.Pop()
		require.Same(t, &sub.Entity, e)
		e.Start()
		m, _, ok, more := sub.Take()
		require.True(t, ok)
		var p, i int
		_, err := fmt.Sscanf(string(m.Payload), "%d:%d", &p, &i)
		require.NoError(t, err)
		require.Equal(t, next[p], i, "producer %d's messages overtook each other", p)
		next[p]++
		got++
		e.Finish(more)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	st := sub.Stats()
	require.Equal(t, uint64(producers*each), st.Accepted)
	require.Zero(t, st.DroppedTotal())
	require.Zero(t, st.Queued)
}

func TestClose(t *testing.T) {
	fx := newFixture(t, "c", subscribers.Options{Depth: 3})
	src := &fakeSource{}
	require.NoError(t, src.Attach(fx.sub))
	require.True(t, fx.sub.Deliver(msg("c", "1")))
	require.True(t, fx.sub.Deliver(msg("c", "2")))

	fx.sub.Close()
	require.True(t, fx.sub.Closed())
	require.Equal(t, []*subscribers.Subscription{fx.sub}, src.detachCalls(), "Close must detach from the source")

	// Later messages are refused and counted.
	require.False(t, fx.sub.Deliver(msg("c", "3")))
	require.False(t, fx.sub.Deliver(msg("c", "4")))
	st := fx.sub.Stats()
	require.Equal(t, uint64(2), st.Accepted)
	require.Equal(t, uint64(2), st.Dropped[subscribers.Closed])
	require.Equal(t, uint64(2), st.DroppedTotal())
	require.Equal(t, []string{"closed", "closed"}, fx.rec.reasons())
	require.Equal(t, []uint64{0, 0}, fx.rec.seqs(waitset.Drop), "a refused message has no number")

	// Accepted messages still run.
	payloads, seqs := drain(fx.sub)
	require.Equal(t, []string{"1", "2"}, payloads)
	require.Equal(t, []uint64{1, 2}, seqs)

	// Close is idempotent and does not detach twice.
	fx.sub.Close()
	require.True(t, fx.sub.Closed())
	require.Len(t, src.detachCalls(), 1)
}

func TestCloseRefusesForEveryPolicy(t *testing.T) {
	for _, policy := range []subscribers.Policy{subscribers.DropOldest, subscribers.DropNewest, subscribers.Block} {
		for _, full := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s full=%v", policy, full), func(t *testing.T) {
				fx := newFixture(t, "c", subscribers.Options{Depth: 1, Overflow: policy})
				if full {
					require.True(t, fx.sub.Deliver(msg("c", "kept")))
				}
				fx.sub.Close()
				// Must return at once, even with Block on a full queue.
				require.False(t, fx.sub.Deliver(msg("c", "late")))
				st := fx.sub.Stats()
				require.Equal(t, uint64(1), st.Dropped[subscribers.Closed])
				require.Zero(t, st.Dropped[subscribers.QueueFull], "a closed subscription must not evict accepted messages")
				payloads, _ := drain(fx.sub)
				if full {
					require.Equal(t, []string{"kept"}, payloads)
				} else {
					require.Empty(t, payloads)
				}
			})
		}
	}
}

func TestCloseWithoutSource(t *testing.T) {
	sub := newSub(t, "c", subscribers.Options{})
	sub.Close()
	require.True(t, sub.Closed())
	require.False(t, sub.Deliver(msg("c", "x")))
}

// TestCloseReleasesBlockedProducers checks that producers waiting for room
// under Block return, refused and counted, when the subscription closes,
// and that the accepted message stays.
func TestCloseReleasesBlockedProducers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fx := newFixture(t, "c", subscribers.Options{Depth: 1, Overflow: subscribers.Block})
		require.True(t, fx.sub.Deliver(msg("c", "kept")))
		const producers = 3
		done := make(chan bool, producers)
		for i := range producers {
			go func() { done <- fx.sub.Deliver(msg("c", strconv.Itoa(i))) }()
		}
		synctest.Wait()
		require.Empty(t, done, "the producers must wait for room")

		fx.sub.Close()
		synctest.Wait()
		require.Len(t, done, producers, "Close must release every waiting producer")
		for range producers {
			require.False(t, <-done)
		}
		st := fx.sub.Stats()
		require.Equal(t, uint64(producers), st.Dropped[subscribers.Closed])
		require.Equal(t, uint64(1), st.Accepted)
		require.Equal(t, []string{"closed", "closed", "closed"}, fx.rec.reasons())
		payloads, _ := drain(fx.sub)
		require.Equal(t, []string{"kept"}, payloads)
	})
}

func TestDrop(t *testing.T) {
	for _, r := range subscribers.Reasons {
		t.Run(r.String(), func(t *testing.T) {
			fx := newFixture(t, "d", subscribers.Options{})
			fx.sub.Drop(r)
			fx.sub.Drop(r)
			st := fx.sub.Stats()
			require.Equal(t, uint64(2), st.Dropped[r])
			require.Equal(t, uint64(2), st.DroppedTotal())
			require.Zero(t, st.Accepted)
			require.Equal(t, []string{r.String(), r.String()}, fx.rec.reasons())
			require.Equal(t, []uint64{0, 0}, fx.rec.seqs(waitset.Drop))
			require.True(t, fx.set.Empty(), "a drop must not make the subscription ready")
		})
	}
}

// TestDropUnregistered checks that counting a drop needs no wait set.
func TestDropUnregistered(t *testing.T) {
	sub, err := subscribers.New("d", subscribers.Options{})
	require.NoError(t, err)
	sub.Drop(subscribers.Malformed)
	require.Equal(t, uint64(1), sub.Stats().Dropped[subscribers.Malformed])
}

// TestDeliverUnregistered checks that delivering to a subscription that is
// not registered with a wait set panics with a clear message, and leaves the
// subscription usable (not locked) for the recovering caller.
func TestDeliverUnregistered(t *testing.T) {
	const want = "subscribers: Deliver to a subscription not registered with a wait set"
	tests := []struct {
		name    string
		deliver func(*subscribers.Subscription)
	}{
		{"Deliver", func(s *subscribers.Subscription) { s.Deliver(msg("u", "x")) }},
		{"Bus.Attach with a retained message", func(s *subscribers.Subscription) {
			bus := new(subscribers.Router)
			if _, err := bus.Publish(subscribers.Message{Topic: "u", Payload: []byte("r"), Retained: true}); err != nil {
				panic(err)
			}
			_ = bus.Attach(s)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sub, err := subscribers.New("u", subscribers.Options{})
			require.NoError(t, err)
			require.PanicsWithValue(t, want, func() { tt.deliver(sub) })

			done := make(chan int, 1)
			go func() {
				sub.Close()
				done <- sub.Len()
			}()
			select {
			case n := <-done:
				require.Zero(t, n)
			case <-time.After(10 * time.Second): // a failure bound only
				require.FailNow(t, "the panic left the subscription locked")
			}
		})
	}
}

func TestStats(t *testing.T) {
	fx := newFixture(t, "s", subscribers.Options{Depth: 2, Overflow: subscribers.DropNewest})
	for i := range 3 {
		fx.sub.Deliver(msg("s", strconv.Itoa(i)))
	}
	fx.sub.Drop(subscribers.TooLarge)
	want := subscribers.Stats{Accepted: 2, Queued: 2}
	want.Dropped[subscribers.QueueFull] = 1
	want.Dropped[subscribers.TooLarge] = 1
	require.Equal(t, want, fx.sub.Stats())

	fx.sub.Take()
	want.Queued = 1
	require.Equal(t, want, fx.sub.Stats(), "Take changes only Queued")
}

// TestDeliverConcurrentWithClose checks that every message a producer saw
// accepted is still in the queue after Close, however the two interleave.
func TestDeliverConcurrentWithClose(t *testing.T) {
	for round := range 20 {
		sub := newSub(t, "c", subscribers.Options{Depth: 1000})
		var accepted sync.WaitGroup
		counts := make(chan int, 2)
		for p := range 2 {
			accepted.Go(func() {
				n := 0
				for i := range 200 {
					if sub.Deliver(msg("c", fmt.Sprint(p, i))) {
						n++
					}
				}
				counts <- n
			})
		}
		sub.Close()
		accepted.Wait()
		close(counts)
		total := 0
		for n := range counts {
			total += n
		}
		st := sub.Stats()
		require.Equal(t, uint64(total), st.Accepted, "round %d", round)
		require.Equal(t, uint64(400-total), st.Dropped[subscribers.Closed])
		require.Equal(t, total, sub.Len())
	}
}
