package app

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/config"
	"github.com/robotexec/robotexec/internal/nodehooks"
	"github.com/robotexec/robotexec/internal/recording"
	"github.com/robotexec/robotexec/internal/smallfile"
	"github.com/robotexec/robotexec/timers"
)

// What robotexec run -record stores, beside the messages, for replay: the
// metadata records named MetaConfig ({"file", "yaml"}: the config file as
// written), MetaRun ({"start"}: the executor clock's time before the nodes
// were built) and MetaStop ({"time", "dropped", "runs"}: when the run
// stopped, the recorder's drops, and what the nodes' subscriptions and
// one-shot timers ran, as JSON Runs; written last).
const (
	MetaConfig = "robotexec.config"
	MetaRun    = "robotexec.run"
	MetaStop   = "robotexec.stop"
)

// Runs says, by node and by callback key (nodehooks.Key), what the nodes'
// subscriptions and one-shot timers ran in a recorded run, so that its
// replay stops each where the run stopped it. Every node of the config is
// listed, with or without such callbacks.
type Runs map[string]map[string]CallbackRuns

// CallbackRuns is what a subscription or a one-shot timer ran. A replay
// runs as many messages of a subscription and no more: the messages that
// came while the run stopped and never ran (a subscription refuses them
// once closed, and a publication may find its subscriber already gone)
// are its last ones, so the count says exactly which. A replay calls a
// one-shot timer at no deadline after its Last call (and never if it was
// never called): the run's timers stopped before the deadlines still
// armed.
type CallbackRuns struct {
	// Runs counts the messages run, or the timer's calls.
	Runs uint64 `json:"runs"`
	// Last is when a one-shot timer was last called (its event's
	// Actual); zero for a subscription and a timer never called.
	Last time.Time `json:"last,omitzero"`
}

// TimerCall is the payload of a recording.TimerCall message: the call's
// deadline, the deadlines it skipped, and how many messages its node's
// callbacks had handled before it.
type TimerCall struct {
	Expected time.Time `json:"expected"`
	Missed   uint64    `json:"missed"`
	Handled  uint64    `json:"handled"`
}

// runRecording records a run for replay: what enters its subscriptions
// from outside (recording.Input), what its nodes publish
// (recording.Output) and when their periodic timers run
// (recording.TimerCall). A write error stops the recording at once, and
// only the recording: it is logged then, and the run goes on.
type runRecording struct {
	rec     *recording.Recorder
	log     *slog.Logger
	watched chan struct{} // closed when watch has returned

	mu   sync.Mutex
	runs map[string]map[string]*callbackCount // see Runs
}

// openRunRecording creates the file at path and stores cfg's file in it.
func openRunRecording(path string, cfg *config.Config, logger *slog.Logger) (*runRecording, error) {
	data, err := smallfile.Read(cfg.File)
	if err != nil {
		return nil, fmt.Errorf("-record: the config: %w", err)
	}
	rec, err := recording.Create(path, recording.Options{})
	if err != nil {
		return nil, fmt.Errorf("-record: %w", err)
	}
	rec.Metadata(MetaConfig, map[string]string{"file": cfg.File, "yaml": string(data)})
	r := &runRecording{rec: rec, log: logger, watched: make(chan struct{}), runs: map[string]map[string]*callbackCount{}}
	for _, n := range cfg.Nodes {
		// Listed even without counted callbacks, so that a replay knows
		// the node: a periodic timer that never ran stays silent there.
		r.runs[n.Name] = map[string]*callbackCount{}
	}
	go r.watch()
	return r, nil
}

// watch logs the write error that stops the recording when it happens;
// it returns when the recorder has stopped, at the latest when closed.
func (r *runRecording) watch() {
	defer close(r.watched)
	<-r.rec.Done()
	if err := r.rec.Err(); err != nil {
		r.log.Error("recording stopped; the run goes on", "file", r.rec.Path(), "error", err, "messages", r.rec.Stats().Recorded)
	}
}

// begin stores the run's start, the time of its clock before the nodes
// are built.
func (r *runRecording) begin(start time.Time) {
	r.rec.Metadata(MetaRun, map[string]string{"start": start.UTC().Format(time.RFC3339Nano)})
}

// input records a message that the router received.
func (r *runRecording) input(m *bus.Message) {
	r.rec.RecordAs(recording.Input, "", m.Topic, m.Payload, m.Received)
}

// hooks returns the hooks that record what the nodes publish and when
// their timers run.
func (r *runRecording) hooks() *nodehooks.Hooks {
	return &nodehooks.Hooks{
		Published: func(node, topic string, payload []byte, at time.Time) {
			r.rec.RecordAs(recording.Output, node, topic, payload, at)
		},
		TimerCall: func(node, name string, _ *timers.Timer, ev *timers.Event, handled uint64) bool {
			b, _ := json.Marshal(TimerCall{Expected: ev.Expected.UTC(), Missed: ev.Missed, Handled: handled})
			r.rec.RecordAs(recording.TimerCall, node, name, b, ev.Expected)
			return true
		},
		Handling: func(context.Context, string, uint64, bool) {}, // counts handled messages
		Counted:  r.counted,
		Rings:    r.rings,
	}
}

// callbackCount counts a callback's runs, and a one-shot timer's last
// call (UnixNano of its Actual, 0 if none).
type callbackCount struct{ runs, last atomic.Int64 }

// counted is the Counted hook: it counts the messages a subscription ran.
func (r *runRecording) counted(node, key string) func() bool {
	c := r.callback(node, key)
	return func() bool {
		c.runs.Add(1)
		return true
	}
}

// rings is the Rings hook: it counts a one-shot timer's calls and notes
// when the last one came.
func (r *runRecording) rings(node, key string) func(timers.Event) bool {
	c := r.callback(node, key)
	return func(ev timers.Event) bool {
		c.runs.Add(1)
		c.last.Store(ev.Actual.UnixNano())
		return true
	}
}

// callback returns the count of node's callback key, new.
func (r *runRecording) callback(node, key string) *callbackCount {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.runs[node] == nil {
		r.runs[node] = map[string]*callbackCount{}
	}
	c := new(callbackCount)
	r.runs[node][key] = c
	return c
}

// counts returns what the callbacks ran so far.
func (r *runRecording) counts() Runs {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := Runs{}
	for node, keys := range r.runs {
		out[node] = map[string]CallbackRuns{}
		for k, c := range keys {
			cr := CallbackRuns{Runs: uint64(c.runs.Load())}
			if ns := c.last.Load(); ns != 0 {
				cr.Last = time.Unix(0, ns).UTC()
			}
			out[node][k] = cr
		}
	}
	return out
}

// end stores the run's stop, with the runs of the nodes' callbacks, and
// closes the file. The executor has drained: no callback runs any more.
func (r *runRecording) end(stop time.Time) error {
	runs, _ := json.Marshal(r.counts())
	r.rec.Metadata(MetaStop, map[string]string{
		"time":    stop.UTC().Format(time.RFC3339Nano),
		"dropped": fmt.Sprint(r.rec.Stats().Dropped),
		"runs":    string(runs),
	})
	st, err := r.rec.Close()
	<-r.watched
	level := slog.LevelInfo
	if st.Dropped > 0 || err != nil {
		level = slog.LevelWarn
	}
	r.log.Log(context.Background(), level, "recording written", "file", r.rec.Path(), "messages", st.Recorded, "dropped", st.Dropped)
	if err != nil {
		// The cause was logged when it happened.
		return fmt.Errorf("-record: %s: the recording stopped early, at a write error", r.rec.Path())
	}
	return nil
}

// abort closes the file of a run that did not start.
func (r *runRecording) abort() {
	_, _ = r.rec.Close()
	<-r.watched
}
