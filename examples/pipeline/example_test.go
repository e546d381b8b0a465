package pipeline_test

import (
	"fmt"
	"time"

	_ "github.com/robotexec/robotexec/examples/pipeline" // registers stage and sink
	_ "github.com/robotexec/robotexec/nodes/builtin"     // registers heartbeat
	"github.com/robotexec/robotexec/nodes/nodetest"
)

// A heartbeat through two stages to a sink, on a simulated clock and the
// in-process router: five beats pass, and the sink reports, when its node
// shuts down, that it got them all in order.
func Example() {
	r := nodetest.New(nil)
	r.MustBuild("source", "heartbeat", "{ topic: pipeline/0, period: 10ms }")
	r.MustBuild("stage1", "stage", "{ input: pipeline/0, output: pipeline/1 }")
	r.MustBuild("stage2", "stage", "{ input: pipeline/1, output: pipeline/2 }")
	sink := r.MustBuild("sink", "sink", "{ input: pipeline/2 }")
	for range 5 {
		r.Advance(10 * time.Millisecond)
	}
	sink.Shutdown()
	fmt.Print(r.Logs())
	// Output:
	// level=INFO msg=sink node=sink received=5 last_seq=5 gaps=0 out_of_order=0
}
