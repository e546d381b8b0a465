package app

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/robotexec/robotexec/config"
	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/nodehooks"
	"github.com/robotexec/robotexec/internal/recording"
	"github.com/robotexec/robotexec/internal/smallfile"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// What robotexec run -record stores, beside the messages, for replay: the
// metadata records named MetaConfig ({"file", "yaml"}: the config file as
// written), MetaRun ({"start"}: the executor clock's time before the nodes
// were built) and MetaStop ({"time", "dropped", "refused"}: when the run
// stopped, the recorder's drops, and the messages that may not have reached
// the subscriptions because they were closing: those they refused, and the
// nodes' publications made while the executor stopped, which could find a
// subscription already detached; a replay delivers them; written last).
const (
	MetaConfig = "robotexec.config"
	MetaRun    = "robotexec.run"
	MetaStop   = "robotexec.stop"
)

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

	stopping atomic.Bool   // set when the executor starts to stop
	late     atomic.Uint64 // publications recorded since stopping
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
	r := &runRecording{rec: rec, log: logger, watched: make(chan struct{})}
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
func (r *runRecording) input(m *subscribers.Message) {
	r.rec.RecordAs(recording.Input, "", m.Topic, m.Payload, m.Received)
}

// hooks returns the hooks that record what the nodes publish and when
// their timers run.
func (r *runRecording) hooks() *nodehooks.Hooks {
	return &nodehooks.Hooks{
		Published: func(node, topic string, payload []byte, at time.Time) {
			r.rec.RecordAs(recording.Output, node, topic, payload, at)
			if r.stopping.Load() {
				r.late.Add(1)
			}
		},
		TimerCall: func(node, name string, _ *timers.Timer, ev *timers.Event, handled uint64) bool {
			b, _ := json.Marshal(TimerCall{Expected: ev.Expected.UTC(), Missed: ev.Missed, Handled: handled})
			r.rec.RecordAs(recording.TimerCall, node, name, b, ev.Expected)
			return true
		},
		Handling: func(context.Context, string, uint64, bool) {}, // counts handled messages
	}
}

// end stores the run's stop, with the messages refused by the closing
// subscriptions and the publications made while they closed, and closes
// the file.
func (r *runRecording) end(stop time.Time, refused uint64) error {
	dropped := r.rec.Stats().Dropped
	refused += r.late.Load()
	r.rec.Metadata(MetaStop, map[string]string{
		"time":    stop.UTC().Format(time.RFC3339Nano),
		"dropped": fmt.Sprint(dropped),
		"refused": fmt.Sprint(refused),
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

// refusedAtStop counts the messages that the subscriptions of ex refused
// because they were closed: those that came while it drained.
func refusedAtStop(ex *executor.Executor) uint64 {
	var n uint64
	for _, cb := range ex.Callbacks() {
		if cb.Subscription != nil {
			n += cb.Subscription.Stats().Dropped[subscribers.Closed]
		}
	}
	return n
}
