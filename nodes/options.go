package nodes

import (
	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/regopt"
)

// A node's registrations take the executor's options (executor.Depth,
// executor.Overflow, executor.InGroup, executor.Name, executor.Needs), with
// the config's defaults where they give none (executor.queue_depth,
// executor.overflow, else block at QoS 1 and 2 and drop_oldest at QoS 0),
// and these two, which only nodes read.

// QoS sets the MQTT QoS of a subscription or a publisher (default: the
// config's mqtt.qos).
func QoS(q byte) executor.Option { return func(o *regopt.Values[*executor.Group]) { o.QoS = &q } }

// Retain makes a publisher's messages retained.
func Retain() executor.Option { return func(o *regopt.Values[*executor.Group]) { o.Retain = true } }
