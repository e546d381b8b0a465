package nodes_test

import (
	"context"
	"fmt"
	"time"

	"github.com/robotexec/robotexec/nodes"
	"github.com/robotexec/robotexec/nodes/nodetest"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// A node type registers its constructor in an init function; each node of
// that type in config.yaml is built by calling it with the node's *Node.
// Here a thermostat reads temperatures (JSON numbers) and, once a period,
// publishes whether the heater should be on. nodetest runs it on a
// simulated clock, as robotexec run would on the real one.
func Example() {
	r := nodetest.New(nil)
	r.MustBuild("thermo", "example_thermostat", "{ input: room/temp, output: heater/on, below: 19.5, period: 1s }")

	r.Publish("room/temp", "18.9")
	r.Advance(time.Second) // 18.9 < 19.5: on
	r.Publish("room/temp", "20.1")
	r.Advance(time.Second) // off

	fmt.Println(r.Published("heater/on"))
	// Output:
	// [true false]
}

func init() {
	nodes.Register("example_thermostat", "turns a heater on below a temperature", newThermostat)
	nodes.Register("example_doors", "counts door openings per door", newDoors)
	nodes.Register("example_greeter", "says hello once", newGreeter)
}

func newThermostat(n *nodes.Node) error {
	// Defaults first: Params keeps the fields whose keys are absent.
	p := struct {
		Input  string        `yaml:"input"`
		Output string        `yaml:"output"`
		Below  float64       `yaml:"below"`
		Period time.Duration `yaml:"period"`
	}{Below: 20, Period: 5 * time.Second}
	if err := n.Params(&p); err != nil {
		return err
	}
	out := n.Publisher(p.Output)
	var last float64
	// The node's callbacks never overlap: last needs no lock.
	nodes.Subscribe(n, p.Input, func(ctx context.Context, celsius float64) { last = celsius })
	n.Timer(p.Period, func(ctx context.Context, _ timers.Event) { out.PublishJSON(ctx, last < p.Below) })
	return nil
}

// Params decodes strictly: a key the struct has no field for fails the
// node's construction, with the file, line and key (nodetest's config is
// nodetest.yaml; robotexec run names config.yaml and exits 2).
func ExampleNode_Params() {
	r := nodetest.New(nil)
	_, err := r.Build("thermo", "example_thermostat", "{ input: room/temp, output: heater/on, bellow: 19.5 }")
	fmt.Println(err)
	// Output:
	// node thermo (example_thermostat): nodetest.yaml:5: nodes[0].params.bellow: unknown key; did you mean "below"?
}

// Subscribe with a plain callback gets every message whole: its topic,
// its payload and when it arrived. A filter's wildcards match many topics.
func ExampleNode_Subscribe() {
	r := nodetest.New(nil)
	r.MustBuild("doors", "example_doors", "{}")
	r.Publish("door/front/open", "1", "1")
	r.Publish("door/back/open", "1")
	fmt.Print(r.Logs())
	// Output:
	// level=INFO msg="door opened" node=doors topic=door/front/open times=1
	// level=INFO msg="door opened" node=doors topic=door/front/open times=2
	// level=INFO msg="door opened" node=doors topic=door/back/open times=1
}

// OneShot runs a callback once, after a delay on the node's clock.
func ExampleNode_OneShot() {
	r := nodetest.New(nil)
	r.MustBuild("greeter", "example_greeter", "{}")
	r.Advance(time.Second)
	fmt.Print(r.Logs())
	// Output:
	// level=INFO msg=hello node=greeter due=00:00:00.500
}

func newDoors(n *nodes.Node) error {
	counts := map[string]int{}
	n.Subscribe("door/+/open", func(ctx context.Context, m subscribers.Message) {
		counts[m.Topic]++
		n.Logger().Info("door opened", "topic", m.Topic, "times", counts[m.Topic])
	})
	return nil
}

func newGreeter(n *nodes.Node) error {
	n.OneShot(500*time.Millisecond, func(ctx context.Context, ev timers.Event) {
		n.Logger().Info("hello", "due", ev.Expected.Format("15:04:05.000"))
	})
	return nil
}
