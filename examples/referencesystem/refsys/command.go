package refsys

import (
	"context"
	"errors"
	"time"

	"github.com/robotexec/robotexec/nodes"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// CommandParams are the params of a command node.
type CommandParams struct {
	Input string `yaml:"input"` // required
	// Warmup is the number of messages skipped before the statistics
	// start; default 9, as the original's.
	Warmup int `yaml:"warmup"`
	// Report is how often the statistics are logged, and once more when
	// robotexec stops; 0 logs them after every message, as the original
	// prints them. Default 1s.
	Report time.Duration `yaml:"report"`
}

// NewCommand builds a command node, the end of a path: it computes the
// KPIs of each message that arrives (see KPIs, with the Autoware graph's
// hot path) and logs their statistics: min, mean, max and standard
// deviation of the latency, the hot path's latency and drops, and the
// behavior planner's period, in milliseconds, and the samples it missed.
func NewCommand(n *nodes.Node) error {
	p := CommandParams{Warmup: 9, Report: time.Second}
	if err := n.Params(&p); err != nil {
		return err
	}
	switch {
	case p.Input == "":
		return errors.New("input is required")
	case p.Warmup < 0:
		return errors.New("warmup must not be negative")
	case p.Report < 0:
		return errors.New("report must not be negative")
	}
	k := KPIs{HotPath: Autoware.HotPath, Warmup: p.Warmup}
	var last uint32
	var lost uint64
	report := func() {
		if k.Latency.N > 0 {
			n.Logger().Info("statistics", append(k.Attrs(), "missed", lost)...)
		}
	}
	n.Subscribe(p.Input, func(ctx context.Context, m subscribers.Message) {
		now := n.Clock().Now()
		msg, ok := decode(n, m)
		if !ok {
			return
		}
		lost += uint64(missed(msg, &last))
		if _, ok := k.Add(msg, now); ok && p.Report == 0 {
			report()
		}
	}, keepLast(depthCommand)...)
	if p.Report > 0 {
		n.Timer(p.Report, func(context.Context, timers.Event) { report() })
	}
	n.OnShutdown(report)
	return nil
}
