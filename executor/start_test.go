package executor_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/testenv"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// Bounds of TestStartsBeat.
const (
	startsBeat       = 1000
	startsBeatShort  = 100
	startsBeatLanes  = 4
	startsBeatBudget = 20 * time.Second
	// startsBeatWithin is how late a heartbeat's first run may start
	// after its deadline.
	startsBeatWithin = 500 * time.Millisecond
)

// startScales are the time scales of the starts, in turn: the demo's
// periods divided by 50 down to 330, so that deadlines fall both within
// the precise clock's lead of each other and far apart.
var startScales = []time.Duration{30 * time.Microsecond, 100 * time.Microsecond, 400 * time.Microsecond, 2 * time.Millisecond}

// TestStartsBeat is the start path of robotexec run (executor, timer queue,
// alarm thread) without the processes: it starts executors of the demo's
// shape (see demoShape) again and again on the precise clock, several at
// once, under the load of two busy loops, and requires every heartbeat's
// first run, on the recorded runs, within startsBeatWithin of its
// deadline. A start without one fails with its recorded runs and the
// executor's goroutines.
func TestStartsBeat(t *testing.T) {
	starts := startsBeat
	if testing.Short() {
		starts = startsBeatShort
	}
	stop := testenv.BusyLoops(2)
	defer stop()
	begin := time.Now()
	var next atomic.Int64
	errs := make(chan error, starts)
	var made atomic.Int64
	var dumped atomic.Bool // the goroutines of the first start without a beat
	var wg sync.WaitGroup
	for range startsBeatLanes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1))
				if i > starts || time.Since(begin) > startsBeatBudget {
					return
				}
				made.Add(1)
				if err := startOnce(startScales[i%len(startScales)], &dumped); err != nil {
					errs <- fmt.Errorf("start %d: %w", i, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if int(made.Load()) < starts {
		t.Logf("the time budget of %v is spent: %d starts of %d made", startsBeatBudget, made.Load(), starts)
	}
	t.Logf("%d starts in %v", made.Load(), time.Since(begin).Round(time.Millisecond))
}

// startOnce starts an executor of the demo's shape at scale and waits for
// the heartbeat's first run; it returns an error when that run started
// more than startsBeatWithin after its deadline, or did not come: with
// the process's goroutines the first time, when dumped is not set yet.
func startOnce(scale time.Duration, dumped *atomic.Bool) (err error) {
	base := time.Now()
	runs := &runTrace{base: base}
	ex := executor.New(executor.Options{Workers: 2, Clock: timers.Precise{}, Logger: quiet(), Runs: runs,
		Stamp: func() int64 { return int64(time.Since(base)) }})
	beat, err := demoShape(ex, scale)
	if err != nil {
		return err
	}
	first := runs.watch(beat)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ex.Run(ctx) }()
	defer func() {
		cancel()
		err = errors.Join(err, <-done)
	}()
	select {
	case r := <-first:
		late := time.Duration(r.Start) - r.Trigger.Sub(base)
		if late > startsBeatWithin {
			return fmt.Errorf("the heartbeat's first run started %v after its deadline; the runs:\n%s", late, runs)
		}
		return nil
	case <-time.After(100*scale + startsBeatWithin + time.Second):
		err := fmt.Errorf("no heartbeat run; stats %+v; the runs:\n%s", ex.Stats(), runs)
		if !dumped.Swap(true) {
			buf := make([]byte, 1<<20)
			err = fmt.Errorf("%w\nthe goroutines:\n%s", err, buf[:runtime.Stack(buf, true)])
		}
		return err
	}
}

// demoShape registers on ex the callbacks of the demo (examples/config.yaml)
// at scale (the demo's periods are 50 times scale and more): two sensors'
// timers publishing in-process, a bridge republishing them, a filter with
// a timer of its own, a watchdog that re-arms a one-shot timer at every
// message, as the watchdog node does, and a heartbeat timer, whose
// callback ID it returns.
func demoShape(ex *executor.Executor, scale time.Duration) (heartbeat uint64, err error) {
	r := new(subscribers.Router)
	var errs []error
	must := func(err error) { errs = append(errs, err) }
	publisher := func(_ *executor.Owner, topic string) *subscribers.Publisher {
		p, err := r.Publisher(topic)
		must(err)
		return p
	}
	for i, name := range []string{"imu0", "odom"} {
		o := ex.NewOwner(name, nil)
		p := publisher(o, "sensors/"+name+"/raw")
		_, err := o.Timer(time.Duration(i+1)*scale, func(ctx context.Context, _ timers.Event) { p.Publish(ctx, []byte(`{"ax":0.1}`)) })
		must(err)
	}
	bridge := ex.NewOwner("sensor_bridge", nil)
	out := map[string]*subscribers.Publisher{
		"sensors/imu0/raw": publisher(bridge, "robot/imu0/data"),
		"sensors/odom/raw": publisher(bridge, "robot/odom/data"),
	}
	_, err = bridge.Subscribe(r, "sensors/+/raw", func(ctx context.Context, m subscribers.Message) { out[m.Topic].Publish(ctx, m.Payload) })
	must(err)
	filter := ex.NewOwner("imu_filter", nil)
	filtered := publisher(filter, "robot/imu0/filtered")
	_, err = filter.Subscribe(r, "robot/imu0/data", func(ctx context.Context, _ subscribers.Message) {})
	must(err)
	_, err = filter.Timer(10*scale, func(ctx context.Context, _ timers.Event) { filtered.Publish(ctx, []byte(`{}`)) })
	must(err)
	dog := ex.NewOwner("sensor_watchdog", nil)
	stale, err := dog.OneShot(50*scale, func(ctx context.Context, _ timers.Event) {})
	must(err)
	if stale != nil {
		stale.Cancel() // armed by the first message
		_, err = dog.Subscribe(r, "robot/+/data", func(ctx context.Context, _ subscribers.Message) { stale.ResetAt(time.Now().Add(50 * scale)) })
		must(err)
	}
	hb := ex.NewOwner("heartbeat", nil)
	beat, err := hb.Timer(100*scale, func(ctx context.Context, _ timers.Event) {})
	must(err)
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	return beat.ID(), nil
}

// runTrace records an executor's runs, stamped from base, and sends the
// first run of the callback it watches.
type runTrace struct {
	base    time.Time
	mu      sync.Mutex
	runs    []executor.Run
	watched uint64
	first   chan executor.Run
}

// watch returns the channel that gets id's first run.
func (l *runTrace) watch(id uint64) <-chan executor.Run {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.watched, l.first = id, make(chan executor.Run, 1)
	return l.first
}

func (l *runTrace) Ran(r executor.Run) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.runs = append(l.runs, r)
	if r.ID == l.watched && l.first != nil {
		l.first <- r
		l.first = nil
	}
}

// String lists the runs: callback, trigger and start (from base), in the
// order they ended.
func (l *runTrace) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	runs := slices.Clone(l.runs)
	var s string
	for _, r := range runs {
		s += fmt.Sprintf("  callback %d on worker %d: trigger %v, start %v\n", r.ID, r.Worker, r.Trigger.Sub(l.base), time.Duration(r.Start))
	}
	return s
}
