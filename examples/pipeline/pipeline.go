// Package pipeline is an example of node types that make a processing
// pipeline: a stage that works on each message and passes it on, and a sink
// that checks what arrives. With examples/pipeline.yaml they show the path
// between nodes of one process: each hop goes straight into the next
// stage's queue, without the broker, and a slow stage whose queue has the
// block policy holds its producer back instead of dropping messages.
package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/nodes"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

func init() {
	nodes.Register("stage", "pipeline stage: passes each message of input on to output, after work", NewStage)
	nodes.Register("sink", "pipeline end: counts the messages of input and checks the order of their seq", NewSink)
}

// StageParams are the params of a stage.
type StageParams struct {
	Input  string        `yaml:"input"`  // topic filter to read
	Output string        `yaml:"output"` // topic to publish to
	Work   time.Duration `yaml:"work"`   // how long each message takes to process (a wait that ends early when the callback's context is done)
}

// NewStage builds a stage node.
func NewStage(n *nodes.Node) error {
	var p StageParams
	if err := n.Params(&p); err != nil {
		return err
	}
	if p.Input == "" || p.Output == "" {
		return fmt.Errorf("input and output are required")
	}
	if p.Work < 0 {
		return fmt.Errorf("work %v is negative", p.Work)
	}
	out := n.Publisher(p.Output)
	n.Subscribe(p.Input, func(ctx context.Context, m subscribers.Message) {
		if p.Work > 0 {
			work := time.NewTimer(p.Work)
			select {
			case <-work.C:
			case <-ctx.Done(): // the drain deadline of a stop
				work.Stop()
			}
		}
		if err := out.Publish(ctx, m.Payload); err != nil {
			n.Logger().Warn("stage: publish failed", "err", err)
		}
	}, executor.Name("stage"))
	return nil
}

// SinkParams are the params of a sink.
type SinkParams struct {
	Input string        `yaml:"input"` // topic filter to read
	Log   time.Duration `yaml:"log"`   // how often to log the counts; 0: only at the end
}

// NewSink builds a sink node. It reads a "seq" number from each JSON
// payload (as heartbeat nodes publish, from 1) and counts the messages, the
// seq numbers skipped (gaps), and those that came again or out of order.
// It logs the counts every Log and when robotexec stops.
func NewSink(n *nodes.Node) error {
	var p SinkParams
	if err := n.Params(&p); err != nil {
		return err
	}
	if p.Input == "" {
		return fmt.Errorf("input is required")
	}
	var received, gaps, disorder, last uint64
	report := func() {
		n.Logger().Info("sink", "received", received, "last_seq", last, "gaps", gaps, "out_of_order", disorder)
	}
	nodes.Subscribe(n, p.Input, func(_ context.Context, v struct {
		Seq uint64 `json:"seq"`
	}) {
		received++
		switch {
		case v.Seq <= last:
			disorder++
		case v.Seq > last+1:
			gaps += v.Seq - last - 1
		}
		last = max(last, v.Seq)
	}, executor.Name("sink"))
	if p.Log > 0 {
		n.Timer(p.Log, func(ctx context.Context, _ timers.Event) { report() }, executor.Name("report"))
	}
	n.OnShutdown(report)
	return nil
}
