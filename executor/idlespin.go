package executor

import (
	"runtime"
	"time"

	"github.com/robotexec/robotexec/internal/tsc"
)

// spinMargin is how long past a deadline a worker woken early for it
// polls, in case the counter's reading of the deadline is a little off.
const spinMargin = 20 * time.Microsecond

// early is the timer queue's early ring, a lead ahead of deadline: it
// wakes a worker that, finding nothing to do, polls the timers until the
// deadline has passed (see waitLocked), so that at the deadline a worker is
// running instead of asleep. Waking a sleeping thread takes tens of
// microseconds; the lead covers it.
func (e *Executor) early(deadline time.Time) {
	now, ticks := time.Now(), tsc.Read()
	e.spinUntil.Store(ticks + int64(float64(deadline.Sub(now)+spinMargin)/tsc.NsPerTick()))
	e.wake()
}

// spin polls the timers until the counter reaches until or work is
// ready, whichever is first.
func (e *Executor) spin(until int64) {
	for tsc.Read() < until {
		e.timers.Poll()
		if !e.set.Empty() {
			return
		}
	}
}

// idleSpin is the longest a worker that runs out of work keeps looking
// for more, yielding its processor between looks, before it parks.
//
// Parking is cheap for the worker but not for the process: every wake-up
// of a parked worker makes the Go scheduler start a spinning thread, and
// on a machine with few cores those threads outnumber the cores, so the
// kernel preempts one for a whole time slice (4 ms here). A preempted
// worker in the middle of a callback holds its subscription, and per-topic
// order makes the subscription's messages wait for it: at a million
// messages a second on two workers, the p99 dispatch latency was 1–3 ms
// with parking at once, 3–30 µs with this spin (internal/bench's
// LatencyExecutor).
//
// The spin adapts, so that it costs little where it does not help: each
// worker shortens its spin by an eighth of idleSpin (down to minIdleSpin)
// when a spin ends without work, as under periodic timers, and spins the
// whole idleSpin again as soon as work comes during one, as under a dense
// stream of messages.
const idleSpin = 20 * time.Microsecond

// minIdleSpin is the shortest idle spin: a look or two.
const minIdleSpin = time.Microsecond

// spinIdle looks for work for about w.spinFor: a trigger into the wait
// set ends it. Work that other workers hold or queue does not, as they
// take it themselves. It adapts w.spinFor to what it found.
func (e *Executor) spinIdle(w *worker) {
	if w.spinFor == 0 {
		w.spinFor = idleSpin
	}
	start := time.Now()
	for i := 0; ; i++ {
		if !e.set.Empty() {
			w.spinFor = idleSpin
			return
		}
		if i%8 == 7 && time.Since(start) > w.spinFor {
			w.spinFor = max(w.spinFor-idleSpin/8, minIdleSpin)
			return
		}
		runtime.Gosched()
	}
}
