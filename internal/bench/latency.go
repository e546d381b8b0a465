package bench

import (
	"context"
	"math"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/robotexec/robotexec/subscribers"
)

// Latency is the distribution of trigger → callback start delays of a
// paced run.
type Latency struct {
	// P50, P99 and P999 are percentiles of the delays.
	P50, P99, P999 time.Duration
	// Events is the number of callbacks run.
	Events int
	// Rate is the rate the producer achieved, in events per second.
	Rate float64
}

func latencyOf(h *Histogram, events int, d time.Duration) Latency {
	p := h.Percentiles(0.50, 0.99, 0.999)
	return Latency{P50: p[0], P99: p[1], P999: p[2], Events: events, Rate: float64(events) / d.Seconds()}
}

// pace calls send(i) for i = 0, 1, ... at rate per second on the monotonic
// clock, for d, and returns the number of calls and the time they took;
// at an infinite rate it calls send as fast as it can.
// Between two events it spins on the clock calling runtime.Gosched: the
// producer stays on its processor, so that the pacing is exact to a
// fraction of a microsecond, but yields it at once to a goroutine that its
// last event woke. A plain spin would leave that goroutine waiting on the
// spinning producer's processor until another one steals it, some 40 µs
// later on two cores, for both systems alike; a sleep would make the
// pacing as coarse as Go's timers (tens of microseconds to a millisecond).
// Yielding is what a real producer, a network reader that goes back to its
// socket, does. When the producer falls behind the schedule it sends at
// once, without sleeping, until it catches up.
func pace(rate float64, d time.Duration, send func(i int)) (int, time.Duration) {
	interval := float64(time.Second) / rate
	start := time.Now()
	for i := 0; ; i++ {
		due := time.Duration(float64(i) * interval)
		now := time.Since(start)
		for now < due {
			runtime.Gosched()
			now = time.Since(start)
		}
		if now >= d {
			return i, now
		}
		send(i)
	}
}

// LatencyExecutor measures trigger → callback start through
// DispatchExecutor's workload (subscriptions of depth ChanCapacity/(4·W)
// here, so that all of them hold as many events as the baseline's channel:
// a stall lets neither system queue more than the other), the
// producer handing messages round robin to the subscriptions at rate
// events per second for d (see pace). The trigger is the delivery: each
// message carries the monotonic time just before it is handed over, and its
// callback records the time since.
func LatencyExecutor(workers int, rate float64, d time.Duration) (Latency, error) {
	h := NewHistogram(4 * workers)
	r, err := newDispatchRig(workers, func(i int) func(ctx context.Context, _ subscribers.Message) {
		return func(ctx context.Context, m subscribers.Message) { h.Record(i, time.Since(m.Received)) }
	}, max(ChanCapacity/(4*workers), 1))
	if err != nil {
		return Latency{}, err
	}
	r.start()
	nsubs := len(r.subs)
	base := time.Now()
	n, elapsed := pace(rate, d, func(i int) {
		// One read of the monotonic clock, as the baseline's stamp.
		r.subs[i%nsubs].Deliver(subscribers.Message{Received: base.Add(time.Since(base))})
	})
	if err := r.stop(); err != nil {
		return Latency{}, err
	}
	return latencyOf(h, n, elapsed), nil
}

// LatencyLoad returns the rate the latency metric offers both systems,
// "50% load": half the rate that the slower of the two sustains with the
// latency workload's producer, stamping every event, unpaced (three runs
// of d each, alternated, medians), and the two sustained rates. Half the
// executor's dispatch throughput would not do: that producer hands over
// bare messages, and the stamps cost the channel pool more than they cost
// the executor, so at half the executor's throughput the pool could be
// overloaded, its latency then bounded by its channel's capacity.
func LatencyLoad(workers int, d time.Duration) (rate, executor, pool float64, err error) {
	var ex, pl []float64
	for range 3 {
		l, err := LatencyExecutor(workers, math.Inf(1), d)
		if err != nil {
			return 0, 0, 0, err
		}
		ex = append(ex, l.Rate)
		pl = append(pl, LatencyChanPool(workers, math.Inf(1), d).Rate)
	}
	executor, pool = Median(ex), Median(pl)
	return min(executor, pool) / 2, executor, pool, nil
}

// latencySlots is the number of closures the baseline cycles through; far
// more than the channel holds, so that a slot's stamp is not overwritten
// before its closure has read it.
const latencySlots = 1 << 14

// LatencyChanPool measures the baseline of LatencyExecutor at the same
// pace: the producer stores the monotonic time in a slot and sends the
// slot's closure, which records the time since. The closures are made
// beforehand, so that sending allocates nothing.
func LatencyChanPool(workers int, rate float64, d time.Duration) Latency {
	shards := 4 * workers
	h := NewHistogram(shards)
	base := time.Now()
	stamps := make([]atomic.Int64, latencySlots)
	fns := make([]func(), latencySlots)
	for j := range fns {
		fns[j] = func() { h.Record(j%shards, time.Since(base)-time.Duration(stamps[j].Load())) }
	}
	p := newChanPool(workers)
	n, elapsed := pace(rate, d, func(i int) {
		j := i & (latencySlots - 1)
		stamps[j].Store(int64(time.Since(base)))
		p.ch <- fns[j]
	})
	p.stop()
	return latencyOf(h, n, elapsed)
}
