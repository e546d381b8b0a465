package builtin

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/nodehooks"
	"github.com/robotexec/robotexec/internal/ratelog"
	"github.com/robotexec/robotexec/timers"

	"github.com/robotexec/robotexec/nodes"
)

func init() {
	nodes.Register("heartbeat", `publishes {"node","seq","time"} on topic every period`, newHeartbeat)
	nodehooks.MarkShort("heartbeat")
}

// heartbeatParams are the params of a heartbeat node.
type heartbeatParams struct {
	// Topic to publish on.
	Topic string `yaml:"topic"`
	// Period between beats (optional); defaults to 1s.
	Period time.Duration `yaml:"period"`
}

// beat is a heartbeat message.
type beat struct {
	Node string `json:"node"`
	Seq  uint64 `json:"seq"`
	Time string `json:"time"`
}

// newHeartbeat builds a heartbeat node. Its beats are numbered from 1
// without gaps while it runs, on drift-free deadlines; a beat that comes
// more than a period late replaces the ones it skipped. At QoS 0 the beats
// that the broker could not take are missing outside the process.
func newHeartbeat(n *nodes.Node) error {
	p := heartbeatParams{Period: time.Second}
	if err := n.Params(&p); err != nil {
		return err
	}
	if p.Topic == "" {
		return fmt.Errorf("topic is required")
	}
	if p.Period <= 0 {
		return fmt.Errorf("period %v is not positive", p.Period)
	}
	out := n.Publisher(p.Topic)
	warn := ratelog.New(10 * time.Second)
	var seq uint64
	n.Timer(p.Period, func(ctx context.Context, ev timers.Event) {
		// Every beat takes the next number. One that the broker cannot
		// take (only at QoS 0 while it is away: QoS 1 and 2 wait for it)
		// still reached this process's subscribers; the others see the
		// gap.
		seq++
		err := out.PublishJSON(ctx, beat{Node: n.Name(), Seq: seq, Time: ev.Expected.UTC().Format(time.RFC3339Nano)})
		if err != nil {
			warn.Log(n.Logger(), slog.LevelWarn, "heartbeat: publish failed", "err", err)
		}
	}, executor.Name("beat"))
	return nil
}
