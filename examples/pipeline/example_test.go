package pipeline_test

import (
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/robotexec/robotexec/config"
	_ "github.com/robotexec/robotexec/examples/pipeline" // registers stage and sink
	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/nodes"
	_ "github.com/robotexec/robotexec/nodes/builtin" // registers heartbeat
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// A heartbeat through two stages to a sink, on a simulated clock and the
// in-process router: five beats pass, and the sink reports, when its node
// shuts down, that it got them all in order.
func Example() {
	cfg, err := config.Parse("pipeline.yaml", []byte(`
nodes:
  - { name: source, type: heartbeat, params: { topic: pipeline/0, period: 10ms } }
  - { name: stage1, type: stage, params: { input: pipeline/0, output: pipeline/1 } }
  - { name: stage2, type: stage, params: { input: pipeline/1, output: pipeline/2 } }
  - { name: sink, type: sink, params: { input: pipeline/2 } }
`), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	// Logs to stdout, without the time, for the example's output.
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}}))
	clock := timers.NewSim(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	ex := executor.New(executor.Options{Workers: 1, Clock: clock, Logger: logger})
	block := subscribers.Block
	env := &nodes.Env{Executor: ex, Router: new(subscribers.Router), Logger: logger, Depth: 10, Overflow: &block}
	var built []*nodes.Node
	for _, n := range cfg.Nodes {
		node, err := nodes.Build(env, nodes.Spec{Name: n.Name, Type: n.Type, Params: n.Params})
		if err != nil {
			fmt.Println(err)
			return
		}
		built = append(built, node)
	}
	for range 5 {
		clock.Advance(10 * time.Millisecond)
		ex.SpinAll()
	}
	for _, n := range built {
		n.Shutdown()
	}
	// Output:
	// level=INFO msg=sink node=sink received=5 last_seq=5 gaps=0 out_of_order=0
}
