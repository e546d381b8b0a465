package nodes

import (
	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/regopt"
	"github.com/robotexec/robotexec/subscribers"
)

// GroupKind says how the callbacks of a group may overlap.
type GroupKind = executor.GroupKind

const (
	// MutuallyExclusive groups run one callback at a time.
	MutuallyExclusive = executor.MutuallyExclusive
	// Reentrant groups let different callbacks run at once; one callback
	// still never overlaps itself.
	Reentrant = executor.Reentrant
)

// Group is a callback group (from [Node.Group]): callbacks of a mutually
// exclusive group never overlap; those of a reentrant group may, though
// no callback overlaps itself. It is the executor's.
type Group = executor.Group

// Option adjusts a subscription, a timer or a publisher. Each applies where
// it makes sense and is ignored elsewhere. It is the executor's Option:
// the options of package executor apply to nodes' callbacks as well.
type Option = executor.Option

// InGroup puts a callback in group g (from [Node.Group]) instead of the
// node's default group ([executor.InGroup]).
func InGroup(g *Group) Option { return executor.InGroup(g) }

// Name names a callback in logs, traces and metrics ([executor.Name]).
func Name(name string) Option { return executor.Name(name) }

// QoS sets the MQTT QoS of a subscription or a publisher (default: the
// config's mqtt.qos).
func QoS(q byte) Option { return func(o *regopt.Values) { o.QoS = &q } }

// Retain makes a publisher's messages retained.
func Retain() Option { return func(o *regopt.Values) { o.Retain = true } }

// Depth sets a subscription's queue depth ([executor.Depth]; for a node,
// the default is the config's executor.queue_depth).
func Depth(n int) Option { return executor.Depth(n) }

// Overflow sets a subscription's overflow policy ([executor.Overflow];
// for a node, the default is the config's executor.overflow, else block
// at QoS 1 and 2 and drop_oldest at QoS 0).
func Overflow(p subscribers.Policy) Option { return executor.Overflow(p) }

// Needs makes a callback run only while it holds the named resources,
// exclusively ([executor.Needs]): callbacks of any node that need a
// common resource never overlap, and each resource serves them in the
// order they became ready. Resources are shared by name across the nodes
// of one executor, e.g. Needs("odom", "imu") for a fusion callback.
func Needs(resources ...string) Option { return executor.Needs(resources...) }
