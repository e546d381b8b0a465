package cli

import (
	"context"
	"log/slog"
	"time"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/app"
	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/config"
	"github.com/robotexec/robotexec/internal/facade"
	"github.com/robotexec/robotexec/internal/nodehooks"
	"github.com/robotexec/robotexec/nodes"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// replayer re-runs the nodes of a config on recorded inputs: one worker
// spun by the replayer's goroutine, a simulated clock that it steps from
// deadline to deadline and to each input's time, and an in-process router
// with no broker. The same recording and config give the same outputs.
//
// Each periodic timer call of a node runs with its recorded event, between
// the same two messages of that node as in the recorded run (see
// nodehooks.Hooks): at its deadline, or earlier, before a message that it
// preceded, or later, after the messages it followed.
type replayer struct {
	log    *runLog
	sim    *timers.Sim
	ex     *executor.Executor
	router *subscribers.Router
	nodes  []*nodes.Node
	timers map[timerKey]*replayTimer
	first  map[string]int // each node's first call that may not have run
	unrun  map[runKey]int // runs skipped as the recorded run never made them
}

// runKey names a callback of a node: a nodehooks.Key.
type runKey struct{ node, key string }

// replayTimer is a periodic timer of a node, with its recorded calls.
type replayTimer struct {
	t     *timers.Timer
	call  func(context.Context, timers.Event)
	calls []app.TimerCall
	done  []bool
	at    int // the call whose deadline the timer is armed for
}

// newReplayer builds cfg's nodes for replaying l; out gets what they
// publish, with the simulated time.
func newReplayer(l *runLog, cfg *config.Config, logger *slog.Logger, out func(node, topic string, payload []byte, at time.Time)) (*replayer, error) {
	r := &replayer{log: l, sim: timers.NewSim(l.start), timers: map[timerKey]*replayTimer{}, first: map[string]int{}, unrun: map[runKey]int{}}
	r.ex = executor.New(executor.Options{Workers: 1, Logger: logger, Clock: r.sim})
	r.router = subscribers.NewRouter(subscribers.RouterOptions{})
	e := app.NodeEnv(cfg, r.ex, r.router, logger)
	ctx := nodehooks.With(context.Background(), &nodehooks.Hooks{Published: out, TimerMade: r.timerMade, TimerCall: r.timerCall, Handling: r.handling, Counted: r.counted, Rings: r.rings})
	for _, n := range cfg.Nodes {
		node, err := app.BuildNode(ctx, e, n)
		if err != nil {
			return nil, err
		}
		r.nodes = append(r.nodes, node)
	}
	return r, nil
}

// timerMade arms a node's periodic timer for its first recorded call, or
// disarms it if the recording never saw it run. The timers of a node that
// the recording does not know (one added to the CONFIG given) keep their
// periods on the simulated clock.
func (r *replayer) timerMade(node, name string, t *timers.Timer, call func(context.Context, timers.Event)) {
	if !r.log.knows(node) {
		return
	}
	calls := r.log.timers[timerKey{node, name}]
	rt := &replayTimer{t: t, call: call, calls: calls, done: make([]bool, len(calls))}
	r.timers[timerKey{node, name}] = rt
	rt.arm()
}

// arm arms the timer for its call at, or disarms it after its last.
func (rt *replayTimer) arm() {
	if rt.at < len(rt.calls) {
		rt.t.ResetAt(rt.calls[rt.at].Expected)
	} else {
		rt.t.Cancel()
	}
}

// counted is the Counted hook: a subscription of the recorded run runs as
// many messages as it did there, and no more. The messages it did not
// run came while the run stopped: the subscription refused them once
// closed, or they found it gone. A subscription the recording does not
// count (of a node added to the CONFIG given, or in a recording without
// counts) runs every message.
func (r *replayer) counted(node, key string) func() bool {
	c, ok := r.log.runs[node][key]
	if !ok {
		return nil
	}
	var ran uint64
	return func() bool {
		if ran < c.Runs {
			ran++
			return true
		}
		r.unrun[runKey{node, key}]++
		return false
	}
}

// rings is the Rings hook: a one-shot timer of the recorded run is called
// at no deadline after its last call there, and never if it was never
// called: the run's timers stopped before the deadlines still armed.
func (r *replayer) rings(node, key string) func(timers.Event) bool {
	c, ok := r.log.runs[node][key]
	if !ok {
		return nil
	}
	return func(ev timers.Event) bool {
		if c.Runs > 0 && !ev.Expected.After(c.Last) {
			return true
		}
		r.unrun[runKey{node, key}]++
		return false
	}
}

// timerCall is the TimerCall hook: the call due runs now if its node has
// handled the messages that preceded it, and waits for them otherwise.
func (r *replayer) timerCall(node, name string, _ *timers.Timer, ev *timers.Event, handled uint64) bool {
	rt := r.timers[timerKey{node, name}]
	if rt == nil {
		return true // a node the recording does not know
	}
	if rt.at >= len(rt.calls) {
		return false
	}
	k := rt.at
	for rt.at++; rt.at < len(rt.calls) && rt.done[rt.at]; rt.at++ {
	}
	rt.arm()
	c := rt.calls[k]
	if rt.done[k] || c.Handled > handled {
		return false // ran before a message, or waits for messages
	}
	rt.done[k] = true
	*ev = timers.Event{Expected: c.Expected, Actual: c.Expected, Missed: c.Missed}
	return true
}

// handling is the Handling hook: before a message, the node's calls that
// preceded it run; after it, those that waited for it and whose deadline
// passed.
func (r *replayer) handling(ctx context.Context, node string, handled uint64, done bool) {
	if done {
		r.runCalls(ctx, node, handled+1, true)
	} else {
		r.runCalls(ctx, node, handled, false)
	}
}

// runCalls runs, in recorded order, the node's calls that had up to
// handled messages before them; overdue, only those whose deadline
// passed.
func (r *replayer) runCalls(ctx context.Context, node string, handled uint64, overdue bool) {
	refs := r.log.nodeCalls[node]
	i := r.first[node]
	for ; i < len(refs); i++ {
		rt := r.timers[refs[i].key]
		k := refs[i].i
		if rt == nil || rt.done[k] {
			continue
		}
		c := rt.calls[k]
		if c.Handled > handled || (overdue && k >= rt.at) {
			break
		}
		rt.done[k] = true
		rt.call(ctx, timers.Event{Expected: c.Expected, Actual: c.Expected, Missed: c.Missed})
	}
	for j := r.first[node]; j < i; j++ {
		rt := r.timers[refs[j].key]
		if rt != nil && !rt.done[refs[j].i] {
			return
		}
		r.first[node] = j + 1
	}
}

// run feeds the recorded inputs at their times, runs the nodes to the
// recorded stop, then shuts them down. It stops early, with the nodes
// shut down, as soon as halted (nil: never) reports true between two
// steps; it returns the number of inputs fed and the simulated time it
// reached.
func (r *replayer) run(halted func() bool) (fed int, at time.Time) {
	if halted == nil {
		halted = func() bool { return false }
	}
	defer func() {
		for i := len(r.nodes) - 1; i >= 0; i-- {
			r.nodes[i].Shutdown()
		}
	}()
	r.ex.SpinAll()
	for _, in := range r.log.inputs {
		if !r.stepTo(in.at, halted) {
			return fed, r.sim.Now()
		}
		bus.Receive(facade.Router(r.router), &bus.Message{Topic: in.topic, Payload: in.payload, Received: in.at}, nil)
		fed++
		r.ex.SpinAll()
	}
	r.stepTo(r.log.stop, halted)
	return fed, r.sim.Now()
}

// stepTo advances the simulated clock to t, stopping at every deadline on
// the way to run what falls due: timers due by an input's time run before
// it. It reports false, where it stopped, as soon as halted reports true.
func (r *replayer) stepTo(t time.Time, halted func() bool) bool {
	for !halted() {
		next, ok := facade.Sim(r.sim).Next()
		if !ok || next.After(t) {
			r.sim.AdvanceTo(t)
			r.ex.SpinAll()
			return !halted()
		}
		r.sim.AdvanceTo(next)
		r.ex.SpinAll()
	}
	return false
}
