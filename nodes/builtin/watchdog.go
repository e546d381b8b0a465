package builtin

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/robotexec/robotexec/internal/ratelog"
	"github.com/robotexec/robotexec/nodes"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

func init() {
	nodes.Register("watchdog", "publishes stale/ok alarms for watched topics that fall silent for timeout", NewWatchdog)
}

// WatchdogParams are the params of a watchdog node.
type WatchdogParams struct {
	// Watch is the topic filter whose topics are watched.
	Watch string `yaml:"watch"`
	// Timeout is how long a topic may stay silent.
	Timeout time.Duration `yaml:"timeout"`
	// Alarm is the topic the alarms go to.
	Alarm string `yaml:"alarm"`
}

// Alarm is a watchdog message.
type Alarm struct {
	Topic    string `json:"topic"`
	State    string `json:"state"` // "stale" or "ok"
	LastSeen string `json:"last_seen"`
}

type watched struct {
	timer    *timers.Timer
	lastSeen time.Time
	stale    bool
}

// NewWatchdog builds a watchdog node. Each topic matched by Watch is
// watched from its first message on: when no message arrived for Timeout,
// the watchdog publishes a stale alarm once; on the next message, an ok
// alarm once. Messages on the alarm topic itself are not watched.
func NewWatchdog(n *nodes.Node) error {
	var p WatchdogParams
	if err := n.Params(&p); err != nil {
		return err
	}
	switch {
	case p.Watch == "":
		return fmt.Errorf("watch is required")
	case p.Alarm == "":
		return fmt.Errorf("alarm is required")
	case p.Timeout <= 0:
		return fmt.Errorf("timeout %v is not positive", p.Timeout)
	}
	out := n.Publisher(p.Alarm)
	warn := ratelog.New(10 * time.Second) // a broker outage must not flood the log
	clock := n.Clock()
	topics := map[string]*watched{}
	publish := func(topic, state string, seen time.Time) {
		a := Alarm{Topic: topic, State: state, LastSeen: seen.UTC().Format(time.RFC3339Nano)}
		if err := out.PublishJSON(a); err != nil {
			warn.Log(n.Logger(), slog.LevelWarn, "watchdog: publish failed", "err", err)
		}
		n.Logger().Info("watchdog: "+state, "topic", topic, "last_seen", a.LastSeen)
	}
	n.Subscribe(p.Watch, func(m subscribers.Message) {
		if m.Topic == p.Alarm {
			return
		}
		seen := m.Received
		if seen.IsZero() {
			seen = clock.Now()
		}
		w := topics[m.Topic]
		if w == nil {
			w = &watched{}
			topic := m.Topic
			// The timer's callback is in the node's group, like this one,
			// so the two share w without locks.
			w.timer = n.OneShot(p.Timeout, func(nodes.TimerEvent) {
				if !w.stale {
					w.stale = true
					publish(topic, "stale", w.lastSeen)
				}
			}, nodes.Name("timeout "+topic))
			topics[m.Topic] = w
		} else {
			if w.stale {
				w.stale = false
				publish(m.Topic, "ok", seen)
			}
			if w.timer != nil {
				w.timer.Reset()
			}
		}
		w.lastSeen = seen
	}, nodes.Name("watch"))
	return nil
}
