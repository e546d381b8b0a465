package simsensor_test

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/robotexec/robotexec/config"
	"github.com/robotexec/robotexec/examples/simsensor"
	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/nodes"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// A simulated odometry without noise, on a simulated clock: each tick
// turns the robot by turn/rate and moves it by speed/rate along its new
// heading, stamped with the tick's deadline.
func ExampleNewOdom() {
	cfg, err := config.Parse("robot.yaml", []byte(`
nodes:
  - { name: odom, type: sim_odom, params: { topic: sensors/odom/raw, rate: 2, speed: 1, turn: 1, noise: 0 } }
`), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	clock := timers.NewSim(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	ex := executor.New(executor.Options{Workers: 1, Clock: clock})
	bus := new(subscribers.Router)
	env := &nodes.Env{Executor: ex, Router: bus, Depth: 10}
	n := cfg.Nodes[0]
	if _, err := nodes.Build(env, nodes.Spec{Name: n.Name, Type: n.Type, Params: n.Params}); err != nil {
		fmt.Println(err)
		return
	}
	_, err = ex.NewOwner("printer", nil).Subscribe(bus, "sensors/+/raw", func(m subscribers.Message) {
		var o simsensor.Odometry
		if err := json.Unmarshal(m.Payload, &o); err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s x=%.3f y=%.3f theta=%.1f\n", o.Stamp, o.X, o.Y, o.Theta)
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for range 3 {
		clock.Advance(500 * time.Millisecond)
		ex.SpinAll()
	}
	// Output:
	// 2026-01-01T00:00:00.5Z x=0.439 y=0.240 theta=0.5
	// 2026-01-01T00:00:01Z x=0.709 y=0.660 theta=1.0
	// 2026-01-01T00:00:01.5Z x=0.744 y=1.159 theta=1.5
}
