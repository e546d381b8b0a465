package imufilter_test

import (
	"fmt"
	"time"

	"github.com/robotexec/robotexec/config"
	_ "github.com/robotexec/robotexec/examples/imufilter" // registers imu_filter
	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/nodes"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// A node type runs without a broker or a wall clock: built from its
// config entry on an executor with a simulated clock and an in-process
// router, fed messages, and spun by hand. This is how to test a node.
func ExampleNew() {
	cfg, err := config.Parse("robot.yaml", []byte(`
nodes:
  - name: imu_filter
    type: imu_filter
    params: { input: imu/raw, output: imu/filtered, alpha: 0.5, period: 100ms, log: 0s }
`), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	clock := timers.NewSim(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	ex := executor.New(executor.Options{Workers: 1, Clock: clock})
	bus := new(subscribers.Router)
	env := &nodes.Env{Executor: ex, Router: bus, Depth: 10}
	for _, n := range cfg.Nodes {
		if _, err := nodes.Build(env, nodes.Spec{Name: n.Name, Type: n.Type, Params: n.Params}); err != nil {
			fmt.Println(err)
			return
		}
	}

	// Print what the filter publishes.
	_, err = ex.NewOwner("printer", nil).Subscribe(bus, "imu/filtered", func(m subscribers.Message) {
		fmt.Printf("%s %s\n", m.Topic, m.Payload)
	})
	if err != nil {
		fmt.Println(err)
		return
	}

	raw, _ := bus.Publisher("imu/raw")
	raw.Publish([]byte(`{"ax":1,"az":9.8,"gz":0.25}`))
	raw.Publish([]byte(`{"ax":0.5,"az":9.8,"gz":0.125}`))
	ex.SpinAll() // the subscription callback blends both samples
	clock.Advance(100 * time.Millisecond)
	ex.SpinAll() // the timer callback publishes, then the printer prints
	// Output:
	// imu/filtered {"ax":0.75,"ay":0,"az":9.8,"gx":0,"gy":0,"gz":0.1875,"samples":2}
}
