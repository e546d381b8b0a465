// Package gcpace lets the Go heap grow by a fixed headroom between
// collections, so that a process with little live data does not
// collect every few megabytes.
//
// Go starts a collection when the heap has grown by GOGC percent of the
// live data (100% by default), but at least to 4 MiB. A robotexec process
// often has a megabyte or two of live data while its MQTT client and
// broker allocate for every message: at 10,000 messages a second that is
// a collection every 20 ms, each of which takes a processor for a few
// milliseconds and delays what runs meanwhile. Pacer raises the GC
// percentage so that the heap may grow by its headroom: with 32 MiB of
// headroom and a small heap the percentage is 800 (Go's smallest goal,
// 4 MiB at 100%, scales with it, so the goal is 32 MiB); with 64 MiB live
// it is GOGC's own. The cost is memory: up to the headroom of garbage
// between collections.
//
// The headroom is a bound, not a target: the heap may gather what the
// process allocates in Period, up to the headroom. A process that
// allocates 640 MB a second or more gets all of 32 MiB and a collection
// about every 50 ms; one that allocates 80 MB a second, 4 MB, which is
// Go's own pacing, and keeps its RSS: between bursts, or in a bridge that
// forwards a few thousand messages a second, the garbage would buy little
// but memory.
//
// When the allocation stops, no collection comes to lower the percentage
// again, and the heap would keep the headroom's garbage until Go's
// two-minute collection: Quiet after the last collection, the pacer
// returns the percentage to GOGC's and the free memory to the OS.
//
// The live heap, the scanned stacks and the globals that the percentage
// follows change only when a collection ends, so the pacing goroutine
// wakes then, and only then: an idle process is not woken for it.
package gcpace

import (
	"context"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// span is how long a collection's figures count: the percentage is set
// for the largest heap that the collections of the last span found (at
// most window of them, and at least the last), since it applies to the
// next collection's live heap, which may be larger than the last's.
const span = 1600 * time.Millisecond

// window is the most collections that span holds.
const window = 16

// Period is the time between collections that the headroom buys at most:
// the heap may gather what the process allocated in Period, measured over
// the last span, up to the headroom. A twentieth of a second keeps a
// bridge's RSS after a burst of QoS 1 messages within twice a raw
// client's: at 20,000 messages a second through mosquitto, the bridge
// allocated about 160 MB a second (most of it the MQTT client's reads of
// packets), and a tenth of a second let its RSS reach 30–37 MiB, against
// 21–30 with a twentieth and a raw forwarder's 16–18 (6 bursts each).
// The price is collections: the bench's view workload, which allocates
// about as fast, collects 48 times a second with a twentieth, 24 with a
// tenth, about 50 with Go's own pacing.
const Period = 50 * time.Millisecond

// Quiet is how long the heap may keep the headroom without a collection:
// a process that has not collected for that long since the percentage
// was raised has stopped allocating fast (it collects every Period or so
// while it does), so the percentage returns to GOGC's, and a collection
// returns the free memory to the OS (debug.FreeOSMemory), as a client
// after a burst. It is longer than span, so that the collection's own
// figures no longer see the burst: once per burst.
const Quiet = 2 * time.Second

// period and quiet are Period and Quiet, in nanoseconds, but in the
// package's tests.
var period, quiet atomic.Int64

func init() {
	period.Store(int64(Period))
	quiet.Store(int64(Quiet))
}

// Pacer is a claim on the process's GC percentage: while one or more
// Pacers run, one goroutine adjusts the percentage to the live heap for the
// largest headroom among them; when the last stops, the percentage is
// restored.
type Pacer struct {
	headroom uint64
	stopOnce sync.Once
}

// The process's pacing, shared by the running Pacers; mu guards it.
var (
	mu      sync.Mutex
	running = map[*Pacer]bool{}
	loop    *pacing // nil while no Pacer runs
)

// look is what an adjustment found: the scanned bytes of the last
// collection, the bytes allocated so far, and when.
type look struct {
	scanned   uint64
	allocated uint64
	at        time.Time
}

// pacing is the goroutine that adjusts the percentage.
type pacing struct {
	base    int // the GC percentage it never goes below, restored at the end
	set     int // the percentage it set last
	samples []metrics.Sample
	recent  [window]look // the last adjustments
	next    int          // where the next goes in recent
	cancel  context.CancelFunc
	done    chan struct{}
}

// Start starts a Pacer that lets the heap grow by about headroom bytes
// between collections (by GOGC's proportion where it allows more). It returns nil, and changes
// nothing, when headroom is not positive or when GOGC is "off" or not a
// number: the user paces the collector then.
func Start(headroom int64) *Pacer {
	base, ok := gogc(os.Getenv("GOGC"))
	if headroom <= 0 || !ok {
		return nil
	}
	p := &Pacer{headroom: uint64(headroom)}
	mu.Lock()
	defer mu.Unlock()
	running[p] = true
	if loop == nil {
		ctx, cancel := context.WithCancel(context.Background())
		loop = &pacing{base: base, set: base, cancel: cancel, done: make(chan struct{}),
			samples: []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/scan/stack:bytes"}, {Name: "/gc/scan/globals:bytes"}, {Name: allocsMetric}}}
		go loop.run(ctx)
	}
	loop.adjust(headroomLocked())
	return p
}

// headroomLocked returns the largest headroom of the running Pacers; mu
// must be held.
func headroomLocked() uint64 {
	var h uint64
	for p := range running {
		h = max(h, p.headroom)
	}
	return h
}

// gogc returns the GC percentage that the GOGC value s sets, and whether
// it sets one (false for "off").
func gogc(s string) (int, bool) {
	if s == "" {
		return 100, true
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n > 0
}

// run adjusts the percentage after each collection until ctx ends, and
// returns it to the base when the process has not collected for Quiet.
func (l *pacing) run(ctx context.Context) {
	defer close(l.done)
	ended, stop := collections()
	defer stop()
	calm := time.NewTimer(time.Hour)
	calm.Stop()
	defer calm.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ended:
			mu.Lock()
			raised := false
			if loop == l {
				l.adjust(headroomLocked())
				raised = l.set > l.base
			}
			mu.Unlock()
			if raised {
				calm.Reset(time.Duration(quiet.Load()))
			} else {
				calm.Stop()
			}
		case <-calm.C:
			l.calm()
		}
	}
}

// calm returns the percentage to the base and the free memory to the OS:
// no collection came for Quiet with the percentage raised.
func (l *pacing) calm() {
	mu.Lock()
	if loop != l || l.set == l.base {
		mu.Unlock()
		return
	}
	debug.SetGCPercent(l.base)
	l.set = l.base
	mu.Unlock()
	// A collection, whose end adjusts the percentage again, and the
	// release of what is free.
	debug.FreeOSMemory()
}

// collections returns a channel that receives after each collection,
// coalescing those that come before it is read, and a function that stops
// it. A collection is told by the cleanup of an object that nothing
// references, which the collection that finds it unreachable queues;
// the cleanup arms the next.
func collections() (<-chan struct{}, func()) {
	ended := make(chan struct{}, 1)
	var stopped sync.Mutex // held while arming, so that stop ends it
	done := false
	var arm func()
	arm = func() {
		stopped.Lock()
		defer stopped.Unlock()
		if done {
			return
		}
		// The sentinel holds a pointer so that it is not one of the tiny
		// objects that share a block, whose cleanups may never run.
		s := &sentinel{}
		runtime.AddCleanup(s, func(struct{}) {
			arm() // before the signal, so that the next collection finds it
			select {
			case ended <- struct{}{}:
			default:
			}
		}, struct{}{})
	}
	arm()
	return ended, func() {
		stopped.Lock()
		done = true
		stopped.Unlock()
	}
}

// sentinel is the unreferenced object whose cleanup tells a collection.
type sentinel struct{ _ *byte }

// adjust sets the percentage for headroom and what the last collections
// found; mu must be held. Go's heap goal is the live heap plus GOGC
// percent of the live heap, the stacks and the globals: Percent is given
// their sum, the largest of the last span's, so that the garbage between
// two collections stays within the headroom while the live heap does not
// grow past what they saw.
func (l *pacing) adjust(headroom uint64) {
	metrics.Read(l.samples)
	var live, scanned, allocated uint64
	for i, s := range l.samples {
		if s.Value.Kind() != metrics.KindUint64 {
			continue
		}
		switch {
		case i == 0:
			live = s.Value.Uint64()
		case s.Name == allocsMetric:
			allocated = s.Value.Uint64()
			continue
		}
		scanned += s.Value.Uint64()
	}
	if live == 0 {
		scanned = 0 // no collection yet
	}
	now := time.Now()
	cur := look{scanned: scanned, allocated: allocated, at: now}
	largest, oldest := scanned, cur
	for _, lk := range l.recent {
		if !lk.at.IsZero() && now.Sub(lk.at) < span {
			largest = max(largest, lk.scanned)
			if lk.at.Before(oldest.at) {
				oldest = lk
			}
		}
	}
	l.recent[l.next] = cur
	l.next = (l.next + 1) % window
	headroom = Headroom(headroom, allocated-oldest.allocated, now.Sub(oldest.at))
	if pct := Percent(l.base, headroom, largest); pct != l.set {
		debug.SetGCPercent(pct)
		l.set = pct
	}
}

// allocsMetric is the runtime's count of the bytes allocated so far.
const allocsMetric = "/gc/heap/allocs:bytes"

// Headroom returns the headroom that allocating allocated bytes over
// elapsed earns: what that rate allocates in Period, at most limit; 0
// (Go's own pacing) before a rate is known.
func Headroom(limit, allocated uint64, elapsed time.Duration) uint64 {
	if elapsed <= 0 {
		return 0
	}
	return min(limit, uint64(float64(allocated)*float64(period.Load())/float64(elapsed)))
}

// minHeap is Go's smallest heap goal at GOGC=100; it scales with the
// percentage, so that a goal is at least minHeap times the percentage over
// 100.
const minHeap = 4 << 20

// Percent returns the GC percentage that lets the heap grow by headroom
// bytes before a collection, when Go's proportion applies to scanned bytes
// (the live heap, the stacks and the globals), and never less than base.
// Below minHeap scanned bytes, Go's smallest goal rules: the percentage
// makes it the headroom. Before the first collection (scanned 0) it is
// base.
func Percent(base int, headroom, scanned uint64) int {
	if scanned == 0 {
		return base
	}
	scanned = max(scanned, minHeap)
	pct := min(math.Ceil(float64(headroom)*100/float64(scanned)), math.MaxInt32)
	return max(base, int(pct))
}

// Stop ends p's claim; the last Pacer to stop restores the GC percentage
// and waits for the pacing goroutine. Stop on a nil Pacer does nothing.
func (p *Pacer) Stop() {
	if p == nil {
		return
	}
	p.stopOnce.Do(func() {
		mu.Lock()
		delete(running, p)
		l := loop
		if len(running) > 0 {
			l.adjust(headroomLocked())
			mu.Unlock()
			return
		}
		loop = nil
		debug.SetGCPercent(l.base)
		mu.Unlock()
		l.cancel()
		<-l.done
	})
}
