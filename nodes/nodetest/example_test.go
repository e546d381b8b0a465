package nodetest_test

import (
	"context"
	"fmt"
	"time"

	"github.com/robotexec/robotexec/nodes"
	"github.com/robotexec/robotexec/nodes/nodetest"
	"github.com/robotexec/robotexec/timers"
)

// A total node adds up the numbers it receives and publishes the total
// once a period.
func init() { nodes.Register("example_total", "adds up numbers", newTotal) }

func newTotal(n *nodes.Node) error {
	p := struct {
		Input  string        `yaml:"input"`
		Output string        `yaml:"output"`
		Period time.Duration `yaml:"period"`
	}{Period: time.Second}
	if err := n.Params(&p); err != nil {
		return err
	}
	out := n.Publisher(p.Output)
	var total float64
	nodes.Subscribe(n, p.Input, func(ctx context.Context, x float64) { total += x })
	n.Timer(p.Period, func(ctx context.Context, _ timers.Event) {
		out.PublishJSON(ctx, total)
		n.Logger().Info("total", "total", total)
	})
	return nil
}

// A test builds the node from its params, publishes to it, advances the
// simulated clock, and reads what the node published and logged. In a
// test, New takes the test's t.
func Example() {
	r := nodetest.New(nil)
	r.MustBuild("total", "example_total", "{ input: numbers, output: total, period: 100ms }")

	r.Publish("numbers", "1", "2.5")
	r.Advance(100 * time.Millisecond) // the timer publishes 3.5
	r.Publish("numbers", "x", "4")
	r.Advance(100 * time.Millisecond) // 7.5

	fmt.Println(r.Published("total"))
	fmt.Println(nodetest.PublishedJSON[float64](r, "total"))
	fmt.Println(r.Now().Format("15:04:05.000"))
	fmt.Print(r.Logs())
	// Output:
	// [3.5 7.5]
	// [3.5 7.5]
	// 00:00:00.200
	// level=INFO msg=total node=total total=3.5
	// level=WARN msg="payload does not decode" node=total topic=numbers err="invalid character 'x' looking for beginning of value"
	// level=INFO msg=total node=total total=7.5
}
