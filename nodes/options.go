package nodes

import (
	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// TimerEvent is what a timer callback receives: the deadline it serves, when
// it started, and how many deadlines were skipped before it.
type TimerEvent = timers.Event

// GroupKind says how the callbacks of a group may overlap.
type GroupKind = executor.GroupKind

const (
	// MutuallyExclusive groups run one callback at a time.
	MutuallyExclusive = executor.MutuallyExclusive
	// Reentrant groups let different callbacks run at once; one callback
	// still never overlaps itself.
	Reentrant = executor.Reentrant
)

// Option adjusts a subscription, a timer or a publisher. Each applies where
// it makes sense and is ignored elsewhere.
type Option func(*options)

type options struct {
	group    *executor.Group
	needs    []string
	name     string
	qos      *byte
	retain   bool
	depth    int
	overflow *subscribers.Policy
	made     func(*subscribers.Subscription) // SubscribeSelf's
}

// InGroup puts a callback in group g (from [Node.Group]) instead of the
// node's default group.
func InGroup(g *executor.Group) Option { return func(o *options) { o.group = g } }

// Name names a callback in logs, traces and metrics.
func Name(name string) Option { return func(o *options) { o.name = name } }

// QoS sets the MQTT QoS of a subscription or a publisher (default: the
// config's mqtt.qos).
func QoS(q byte) Option { return func(o *options) { o.qos = &q } }

// Retain makes a publisher's messages retained.
func Retain() Option { return func(o *options) { o.retain = true } }

// Depth sets a subscription's queue depth (default: executor.queue_depth).
func Depth(n int) Option { return func(o *options) { o.depth = n } }

// Overflow sets a subscription's overflow policy (default:
// executor.overflow, else block at QoS 1 and 2 and drop_oldest at QoS 0).
func Overflow(p subscribers.Policy) Option { return func(o *options) { o.overflow = &p } }

// Needs makes a callback run only while it holds the named resources,
// exclusively: callbacks of any node that need a common resource
// never overlap, and each resource serves them in the order they became
// ready. Resources are shared by name across the nodes of one executor,
// e.g. Needs("odom", "imu") for a fusion callback.
func Needs(resources ...string) Option {
	return func(o *options) { o.needs = append(o.needs, resources...) }
}
