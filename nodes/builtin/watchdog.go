package builtin

import (
	"container/list"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/nodehooks"
	"github.com/robotexec/robotexec/internal/ratelog"
	"github.com/robotexec/robotexec/nodes"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

func init() {
	nodes.Register("watchdog", "publishes stale/ok alarms for watched topics that fall silent for timeout", newWatchdog)
	nodehooks.MarkShort("watchdog")
}

// watchdogParams are the params of a watchdog node.
type watchdogParams struct {
	// Watch is the topic filter whose topics are watched.
	Watch string `yaml:"watch"`
	// Timeout is how long a topic may stay silent.
	Timeout time.Duration `yaml:"timeout"`
	// Alarm is the topic the alarms go to.
	Alarm string `yaml:"alarm"`
	// MaxTopics bounds the topics watched at once (optional); defaults to
	// defaultMaxTopics. Past it, the least recently seen topic is no
	// longer watched (no alarm for it until its next message), counted
	// as a drop with reason evicted.
	MaxTopics int `yaml:"max_topics"`
}

// staleness is a watchdog message.
type staleness struct {
	Topic    string `json:"topic"`
	State    string `json:"state"` // "stale" or "ok"
	LastSeen string `json:"last_seen"`
}

// watchdog is a watchdog node's state. Its topics are in two lists, each
// ordered by the time their last message was handled: live ones, which
// fall stale in that order, and stale ones. One one-shot timer is armed
// for the first live topic's deadline, so the node has two callbacks
// whatever the number of topics. Both run in the node's callback group,
// so they share the state without locks.
type watchdog struct {
	n       *nodes.Node
	p       watchdogParams
	out     *subscribers.Publisher
	clock   timers.Clock
	timer   *timers.Timer
	armed   time.Time // the timer's deadline; zero when idle
	topics  map[string]*list.Element
	live    list.List // of *watched
	stale   list.List // of *watched
	warn    *ratelog.Limiter
	logOne  map[string]*ratelog.Limiter // by state: one line a second
	maxSize int
	jumps   jumps  // the clock's jumps back, told by a simulated clock
	jumped  uint64 // the jumps that the deadlines were re-armed for
}

// jumps counts the times a clock that can be set back (a simulated clock
// that follows the clock topic, under use_sim_time) was set back, and
// the time it was last set back to. The clock tells it on the goroutine
// that sets it back, while the watchdog's callbacks may run.
type jumps struct {
	mu sync.Mutex
	n  uint64
	to time.Time
}

// rewound is the clock's OnRewind function.
func (j *jumps) rewound(to time.Time) {
	j.mu.Lock()
	j.n, j.to = j.n+1, to
	j.mu.Unlock()
}

// last returns the count of jumps and the time of the last.
func (j *jumps) last() (uint64, time.Time) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.n, j.to
}

// rewinder is a clock that can be set back and says so (timers.Sim).
type rewinder interface {
	OnRewind(f func(to time.Time))
}

type watched struct {
	topic    string
	lastSeen time.Time // the message's arrival, for the alarm
	deadline time.Time // on the node's clock
}

// newWatchdog builds a watchdog node. Each topic matched by Watch is
// watched from its first message on: when no message arrived for Timeout,
// the watchdog publishes a stale alarm once; on the next message, an ok
// alarm once. Messages on the alarm topic itself are not watched. The
// alarms are logged at Info, at most one line a second for each state.
func newWatchdog(n *nodes.Node) error {
	var p watchdogParams
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
	maxTopics, err := checkMaxTopics(p.MaxTopics)
	if err != nil {
		return err
	}
	w := &watchdog{
		n: n, p: p, out: n.Publisher(p.Alarm), clock: n.Clock(),
		topics: make(map[string]*list.Element), maxSize: maxTopics,
		warn: ratelog.New(10 * time.Second), // a broker outage must not flood the log
		logOne: map[string]*ratelog.Limiter{
			"stale": ratelog.New(time.Second), "ok": ratelog.New(time.Second)},
	}
	w.live.Init()
	w.stale.Init()
	if c, ok := w.clock.(rewinder); ok {
		c.OnRewind(w.jumps.rewound)
	}
	w.timer = n.OneShot(p.Timeout, w.expire, executor.Name("timeout"))
	if w.timer != nil {
		w.timer.Cancel() // armed by the first message
	}
	n.SubscribeSelf(p.Watch, w.seen, executor.Name("watch"))
	return nil
}

// seen handles a message of a watched topic.
func (w *watchdog) seen(ctx context.Context, sub *subscribers.Subscription, m subscribers.Message) {
	if m.Topic == w.p.Alarm {
		return
	}
	w.rearmOnJump()
	seen := m.Received
	if seen.IsZero() {
		seen = w.clock.Now()
	}
	deadline := w.clock.Now().Add(w.p.Timeout)
	e, ok := w.topics[m.Topic]
	switch {
	case !ok:
		if len(w.topics) >= w.maxSize {
			w.evict()
			sub.Drop(subscribers.Evicted)
		}
		e = w.live.PushBack(&watched{topic: m.Topic})
		w.topics[m.Topic] = e
	case e.Value.(*watched).deadline.IsZero(): // stale
		w.stale.Remove(e)
		e = w.live.PushBack(e.Value)
		w.topics[m.Topic] = e
		w.alarm(ctx, m.Topic, "ok", seen)
	default:
		w.live.MoveToBack(e)
	}
	tw := e.Value.(*watched)
	tw.lastSeen, tw.deadline = seen, deadline
	if w.armed.IsZero() {
		w.arm()
	}
}

// evict forgets the least recently seen topic, stale ones first.
func (w *watchdog) evict() {
	l := &w.stale
	if l.Len() == 0 {
		l = &w.live
	}
	e := l.Front()
	delete(w.topics, e.Value.(*watched).topic)
	l.Remove(e)
}

// expire is the timer's callback: the live topics whose deadline passed
// fall stale, in order.
func (w *watchdog) expire(ctx context.Context, _ timers.Event) {
	w.rearmOnJump()
	now := w.clock.Now()
	w.armed = time.Time{}
	for e := w.live.Front(); e != nil; e = w.live.Front() {
		tw := e.Value.(*watched)
		if tw.deadline.After(now) {
			break
		}
		w.live.Remove(e)
		tw.deadline = time.Time{}
		w.topics[tw.topic] = w.stale.PushBack(tw)
		w.alarm(ctx, tw.topic, "stale", tw.lastSeen)
	}
	w.arm()
}

// rearmOnJump re-arms the timeouts on the clock's new time if it was set
// back since the last callback, as rcl re-arms a timer on a jump back of
// ROS time: a live topic whose deadline is more than a timeout after the
// time the clock went back to gets that time plus the timeout, as if it
// had been seen then; the others keep theirs. Without it, a clock that
// starts over (robotexec play -loop -clock) would leave every topic
// waiting for the deadlines of before the jump. Stale topics stay stale
// until their next message. The live list stays in deadline order: the
// deadlines kept come first, and those brought back are all the same.
func (w *watchdog) rearmOnJump() {
	n, to := w.jumps.last()
	if n == w.jumped {
		return
	}
	w.jumped = n
	limit := to.Add(w.p.Timeout)
	for e := w.live.Front(); e != nil; e = e.Next() {
		if tw := e.Value.(*watched); tw.deadline.After(limit) {
			tw.deadline = limit
		}
	}
	w.armed = time.Time{}
	w.arm()
}

// arm arms the timer for the first live topic's deadline, if any. The
// timer may ring early, for a topic seen again meanwhile: expire then
// finds nothing due and arms it again.
func (w *watchdog) arm() {
	e := w.live.Front()
	if e == nil || w.timer == nil {
		return
	}
	w.armed = e.Value.(*watched).deadline
	w.timer.ResetAt(w.armed)
}

func (w *watchdog) alarm(ctx context.Context, topic, state string, seen time.Time) {
	a := staleness{Topic: topic, State: state, LastSeen: seen.UTC().Format(time.RFC3339Nano)}
	if err := w.out.PublishJSON(ctx, a); err != nil {
		w.warn.Log(w.n.Logger(), slog.LevelWarn, "watchdog: publish failed", "err", err)
	}
	w.logOne[state].Log(w.n.Logger(), slog.LevelInfo, "watchdog: "+state, "topic", topic, "last_seen", a.LastSeen)
}
