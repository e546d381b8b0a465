package app

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/ratelog"
	"github.com/robotexec/robotexec/internal/view"
	"github.com/robotexec/robotexec/subscribers"
)

// ClockFeed gives a live view the time of a clock topic, where no
// executor clock follows it: robotexec view's time capability. Make one
// with FeedClock.
type ClockFeed struct {
	view *view.Server
	log  *slog.Logger
	bad  *ratelog.Limiter          // the log of the messages that do not parse
	now  atomic.Pointer[time.Time] // the latest clock time; nil before the first
}

// FeedClock subscribes o to topic on src, keeping the latest message
// only: each clock message,
// {"time": RFC3339Nano}, sets s's time (Server.SetTime), forward or back,
// as a playback that starts over sets it back. A message that does not
// parse is logged, once per ten seconds at most, and ignored. s should
// have Options.Time.
func FeedClock(o *executor.Owner, src subscribers.Source, topic string, s *view.Server, logger *slog.Logger) (*ClockFeed, error) {
	f := &ClockFeed{view: s, log: logger, bad: ratelog.New(10 * time.Second)}
	_, err := o.Subscribe(src, topic, f.set, executor.Name("clock"), executor.Depth(1), executor.Overflow(subscribers.DropOldest))
	if err != nil {
		return nil, err
	}
	return f, nil
}

// set takes a message of the clock topic.
func (f *ClockFeed) set(_ context.Context, m subscribers.Message) {
	t, err := parseClock(m.Payload)
	if err != nil {
		f.bad.Log(f.log, slog.LevelWarn, "clock topic: ignored", "error", err)
		return
	}
	f.now.Store(&t)
	f.view.SetTime(t)
}

// Stamp returns the time that a message received at is shown with: the
// clock topic's latest time, as robotexec run under use_sim_time stamps
// messages with its executor's time; received before the first clock
// message.
func (f *ClockFeed) Stamp(received time.Time) time.Time {
	if t := f.now.Load(); t != nil {
		return *t
	}
	return received
}
