package config_test

import (
	"fmt"
	"time"

	"github.com/robotexec/robotexec/internal/config"
)

func ExampleParse() {
	doc := []byte(`
executor:
  workers: 2
mqtt:
  broker: tcp://localhost:1883
  username: ${MQTT_USER:-robot}
nodes:
  - name: beat
    type: heartbeat
    params: {topic: robot/heartbeat, period: 250ms}
`)
	noEnv := func(string) (string, bool) { return "", false }
	cfg, err := config.Parse("config.yaml", doc, noEnv)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cfg.Executor.Workers, cfg.Executor.QueueDepth, cfg.MQTT.Protocol)
	fmt.Println(cfg.MQTT.Broker, cfg.MQTT.Username, cfg.MQTT.QoS)

	// The node's type decodes its params into its own struct, defaults
	// first.
	p := struct {
		Topic  string        `yaml:"topic"`
		Period time.Duration `yaml:"period"`
		QoS    int           `yaml:"qos"`
	}{Period: time.Second, QoS: 1}
	n := cfg.Nodes[0]
	if err := n.Params.Decode(&p); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s (%s, line %d): %+v\n", n.Name, n.Type, n.Line, p)
	// Output:
	// 2 10 5
	// tcp://localhost:1883 robot 1
	// beat (heartbeat, line 8): {Topic:robot/heartbeat Period:250ms QoS:1}
}

func ExampleParse_errors() {
	doc := []byte(`
executor:
  workers: two
nodes:
  - name: beat
    type: heartbeat
    params:
      period: fast
  - name: beat
    type: hearbeat
`)
	cfg, err := config.Parse("config.yaml", doc, nil)
	// The config comes back with its errors, so that the caller can add
	// what only it can check, here node types and params, and report
	// everything at once, in line order.
	errs := []error{err}
	for _, n := range cfg.Nodes {
		if n.Type != "heartbeat" {
			errs = append(errs, n.Errorf("type", "unknown node type %q (known: heartbeat)", n.Type))
			continue
		}
		var p struct {
			Period time.Duration `yaml:"period"`
		}
		errs = append(errs, n.Params.Decode(&p))
	}
	fmt.Println(config.Join(errs...))
	// Output:
	// config.yaml:3: executor.workers: "two" is not an integer
	// config.yaml:8: nodes[0].params.period: "fast" is not a duration
	// config.yaml:9: nodes[1].name: duplicate node name "beat" (first at line 5)
	// config.yaml:10: nodes[1].type: unknown node type "hearbeat" (known: heartbeat)
}
