package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/robotexec/robotexec/internal/mqtttest"
)

// The run group's bridge rows: `robotexec run` of a config with one bridge
// node beside a raw forwarder, each in a process of its own, through
// mosquitto with a small in-flight window and persistence, fed by a QoS 1
// producer as fast as it can publish.

var (
	specRunBridge      = Spec{Name: "mqtt bridge under run via mosquitto (msgs/s)", Unit: "msgs/s", BaselineName: "raw forwarder", Target: &Target{Of: "ratio", Op: ">=", Bound: 1.0}}
	specRunBridgePaced = Spec{Name: "mqtt bridge under run via mosquitto, paced p99 (us)", Unit: "us", BaselineName: "raw forwarder", Target: &Target{Of: "ratio", Op: "<=", Bound: 1.1}}
	specRunBridgeRSS   = Spec{Name: "mqtt bridge under run via mosquitto, rss (MiB)", Unit: "MiB", BaselineName: "raw forwarder", Target: &Target{Of: "ratio", Op: "<=", Bound: 2.0}}
)

const (
	// RunBridgeBurst is the burst's size where the budget allows.
	RunBridgeBurst = 20_000
	// RunBridgeRate is the paced rate, in messages a second.
	RunBridgeRate = 1000
	// runBridgeWarm is the warm-up burst of each forwarder process.
	runBridgeWarm = 2000
)

// runBridgeMosquitto is the broker's setup: mosquitto's own in-flight
// window of 100 (its default is 20), persistence, and a queue that holds
// a burst.
var runBridgeMosquitto = mqtttest.MosquittoOptions{Persistence: true, Extra: []string{"max_inflight_messages 100"}}

// runBridge measures the bridge of a robotexec run process beside the raw
// forwarder, or says why it could not.
func (s *suite) runBridge() []Metric {
	specs := []Spec{specRunBridge, specRunBridgePaced, specRunBridgeRSS}
	fail := func(err error) []Metric {
		ms := make([]Metric, len(specs))
		for i, sp := range specs {
			ms[i] = failedOrNotMeasured(sp, err)
			if errors.Is(err, ErrNoExecutable) {
				ms[i] = NotMeasured(sp, err.Error())
			}
		}
		return ms
	}
	if s.cfg.Executable == "" {
		return fail(ErrNoExecutable)
	}
	if _, ok := mqtttest.MosquittoPath(); !ok {
		return fail(errNoMosquitto)
	}
	dir, err := os.MkdirTemp("", "robotexec-bench-run-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(dir)
	mq, err := mqtttest.StartMosquitto(dir, runBridgeMosquitto)
	if err != nil {
		return fail(fmt.Errorf("mosquitto: %w", err))
	}
	defer mq.Stop()
	ms, err := s.runBridgeRounds(mq.URL(), dir)
	if err != nil {
		return fail(err)
	}
	return ms
}

// runBridgeRounds measures s.cfg.Repeat repetitions of each forwarder, a
// fresh process each: a warm-up, a burst, the RSS after it, a paced run.
func (s *suite) runBridgeRounds(url, dir string) ([]Metric, error) {
	slice := s.cfg.slice("run")
	n := min(RunBridgeBurst, max(runBridgeWarm, int(slice.Seconds()*4000)))
	paced := min(max(slice/4, time.Second), 5*time.Second)
	w, err := dialWire(url, fmt.Sprintf("robotexec-bench-%d", os.Getpid()))
	if err != nil {
		return nil, err
	}
	defer w.Close()
	start := 0
	round := func(robotexec bool) ([]float64, error) {
		start++
		cmd, err := s.forwarder(robotexec, url, dir, start)
		if err != nil {
			return nil, err
		}
		defer func() {
			stopProcess(cmd)
			if robotexec {
				endSession(url, bridgeClientID(start))
			}
		}()
		return measureForwarder(w, cmd.Process.Pid, n, paced)
	}
	as, bs, err := s.pairs(func() ([]float64, error) { return round(true) }, func() ([]float64, error) { return round(false) })
	if err != nil {
		return nil, err
	}
	ms := []Metric{NewMetric(specRunBridge, as[0], bs[0]), NewMetric(specRunBridgePaced, as[1], bs[1]), NewMetric(specRunBridgeRSS, as[2], bs[2])}
	setup := fmt.Sprintf("%s with persistence, max_inflight_messages 100, max_queued_messages 100000, set_tcp_nodelay", mosquittoVersion())
	ms[0].Note = fmt.Sprintf("`robotexec run` of a config with one bridge node (sensors/+/raw to robot/+/data, mqtt.qos 1, its default persistent session, which the bench ends after each repetition, and %d workers, on one processor: executor.procs' choice for built-in nodes on an external broker) vs a raw paho.mqtt.golang 3.1.1 forwarder (clean session, its handler republishes at QoS 1), each a fresh process a repetition, through %s; a paho.mqtt.golang producer publishes %d QoS 1 messages of %d bytes as fast as it can over %d topics after a warm-up of %d; throughput to the last arrival.",
		s.cfg.Workers, setup, n, BridgePayload, WireTopics, runBridgeWarm)
	ms[1].Note = fmt.Sprintf("the same processes after the burst, %d msgs/s for %v: one-way latency p99, producer to consumer.", RunBridgeRate, paced)
	ms[2].Note = "each process's resident set right after the burst (VmRSS)."
	return ms, nil
}

// measureForwarder measures the forwarder process pid through w: the
// burst's rate, the paced p99 in µs, the RSS after the burst in MiB.
func measureForwarder(w *wire, pid, n int, paced time.Duration) ([]float64, error) {
	if err := w.ready(bridgeStall); err != nil {
		return nil, err
	}
	if _, err := w.burst(runBridgeWarm, bridgeStall); err != nil {
		return nil, err
	}
	rate, err := w.burst(n, bridgeStall+time.Duration(n)*time.Millisecond)
	if err != nil {
		return nil, err
	}
	rss, err := procRSS(pid)
	if err != nil {
		return nil, err
	}
	lat, err := w.paced(RunBridgeRate, paced, bridgeStall)
	if err != nil {
		return nil, err
	}
	p99 := float64(Percentile(lat, 0.99)) / float64(time.Microsecond)
	return []float64{rate, p99, float64(rss) / (1 << 20)}, nil
}

// forwarder starts the robotexec run process (robotexec) or the raw
// forwarder child, the k-th start, forwarding through url.
func (s *suite) forwarder(robotexec bool, url, dir string, k int) (*exec.Cmd, error) {
	var cmd *exec.Cmd
	var err error
	if robotexec {
		cfg := filepath.Join(dir, fmt.Sprintf("bridge-%d.yaml", k))
		// A client id of its own each start: a persistent session of an
		// earlier start would hold messages for it.
		body := fmt.Sprintf("executor: { workers: %d }\nmqtt: { broker: %q, client_id: %s, qos: %d }\nnodes:\n  - { name: bridge, type: bridge, params: { from: sensors/+/raw, to: robot/+/data } }\n",
			s.cfg.Workers, url, bridgeClientID(k), BridgeQoS)
		if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
			return nil, err
		}
		cmd, err = s.robotexec("run", cfg)
	} else {
		cmd, err = s.child(rawForwarderRole, url, fmt.Sprintf("bench-raw-%d-%d", os.Getpid(), k))
	}
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return cmd, nil
}

// bridgeClientID is the client id of the k-th robotexec run process.
func bridgeClientID(k int) string { return fmt.Sprintf("bench-bridge-%d-%d", os.Getpid(), k) }

// endSession ends the broker's persistent session of client id, which a
// stopped robotexec run process left: it would keep a queue of every
// later message for it, and the broker's work for that queue would slow
// the later repetitions, which a user's broker does not do.
func endSession(url, id string) {
	if c, err := dialRaw(url, id, true, bridgeWait); err == nil {
		c.Close()
	}
}

// stopProcess interrupts cmd's process and waits for it.
func stopProcess(cmd *exec.Cmd) {
	_ = cmd.Process.Signal(os.Interrupt)
	_ = cmd.Wait()
}

// rawForwarderRole is the child role of the raw forwarder: args are the
// broker's URL and the client id.
const rawForwarderRole = "raw-forwarder"

func init() { childRoles[rawForwarderRole] = rawForwarder }

// rawForwarder republishes sensors/X/raw to robot/X/data at QoS 1 from a
// raw paho.mqtt.golang client's handler, until ctx ends.
func rawForwarder(ctx context.Context, args []string) error {
	if len(args) != 2 {
		return fmt.Errorf("bench: %s: want URL CLIENT-ID, got %q", rawForwarderRole, args)
	}
	c, err := dialRaw(args[0], args[1], true, bridgeWait)
	if err != nil {
		return err
	}
	defer c.Close()
	err = c.Subscribe("sensors/+/raw", BridgeQoS, func(topic string, payload []byte) {
		sensor := strings.TrimSuffix(strings.TrimPrefix(topic, "sensors/"), "/raw")
		c.Publish("robot/"+sensor+"/data", BridgeQoS, payload)
	})
	if err != nil {
		return err
	}
	<-ctx.Done()
	return nil
}
