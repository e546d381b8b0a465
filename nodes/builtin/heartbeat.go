package builtin

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/robotexec/robotexec/internal/ratelog"

	"github.com/robotexec/robotexec/nodes"
)

func init() {
	nodes.Register("heartbeat", `publishes {"node","seq","time"} on topic every period`, NewHeartbeat)
}

// HeartbeatParams are the params of a heartbeat node.
type HeartbeatParams struct {
	// Topic to publish on.
	Topic string `yaml:"topic"`
	// Period between beats (optional); defaults to 1s.
	Period time.Duration `yaml:"period"`
}

// Beat is a heartbeat message.
type Beat struct {
	Node string `json:"node"`
	Seq  uint64 `json:"seq"`
	Time string `json:"time"`
}

// NewHeartbeat builds a heartbeat node. Its beats are numbered from 1
// without gaps while it runs, on drift-free deadlines; a beat that comes
// more than a period late replaces the ones it skipped.
func NewHeartbeat(n *nodes.Node) error {
	p := HeartbeatParams{Period: time.Second}
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
	n.Timer(p.Period, func(ev nodes.TimerEvent) {
		// A beat that cannot go (the broker is away) keeps its number
		// for the next one, so that subscribers never see a gap.
		err := out.PublishJSON(Beat{Node: n.Name(), Seq: seq + 1, Time: ev.Actual.UTC().Format(time.RFC3339Nano)})
		if err != nil {
			warn.Log(n.Logger(), slog.LevelWarn, "heartbeat: publish failed", "err", err)
			return
		}
		seq++
	}, nodes.Name("beat"))
	return nil
}
