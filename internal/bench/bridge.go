package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/config"
	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/internal/mqtt/broker"
	"github.com/robotexec/robotexec/nodes"
	_ "github.com/robotexec/robotexec/nodes/builtin" // the bridge node
	"github.com/robotexec/robotexec/subscribers"
)

const (
	// BridgeQoS is the QoS of every message of the bridge workload, the
	// config's default.
	BridgeQoS = 1
	// BridgeWindow bounds the messages in flight end to end, so that no
	// queue of the broker overflows (as in internal/mqtt's
	// BenchmarkBridge).
	BridgeWindow = 2000
	// BridgePayload is the size of the messages, in bytes.
	BridgePayload = 64
	// bridgeWait bounds each wait for the broker.
	bridgeWait = 10 * time.Second
	// bridgeStall is how much longer than asked a round may take before
	// it counts as stalled.
	bridgeStall = 30 * time.Second
)

// The bridge workload's modes: robotexec's bridge and the two raw
// forwarders.
const (
	bridgeRobotexec = iota
	bridgeRaw
	bridgeRaw5
)

var bridgeNames = [3]string{"robotexec", "raw", "raw5"}

// rawNames name the raw forwarders in the report, by mode.
var rawNames = map[int]string{bridgeRaw: "raw paho.mqtt.golang 3.1.1", bridgeRaw5: raw5Name}

// bridgeRound is one measured run of a bridge.
type bridgeRound struct {
	out    string // the topic forwarded messages arrive on
	got    atomic.Int64
	window chan struct{} // one element per message in flight
	last   atomic.Int64  // when the last message arrived, since start
	start  time.Time
}

// BridgeRig is the MQTT bridge workload: an embedded broker on a free
// loopback port; robotexec's bridge (a bridge node, built with nodes.Build
// on an executor, reading and publishing through an MQTT client) from
// bench/in/robotexec to bench/out/robotexec; a raw paho.mqtt.golang
// (MQTT 3.1.1) forwarder from bench/in/raw to bench/out/raw; a raw
// paho.golang (MQTT 5) forwarder from bench/in/raw5 to bench/out/raw5; a
// producer and a consumer, both raw paho.mqtt.golang clients. Rounds of
// the bridges alternate; none runs while another is measured.
type BridgeRig struct {
	brk      *broker.Broker
	client   *mqtt.Client
	ex       *executor.Executor
	node     *nodes.Node
	cancel   context.CancelFunc
	done     chan error
	raw      *rawClient
	raw5     *raw5Forwarder
	producer *rawClient
	consumer *rawClient
	cur      atomic.Pointer[bridgeRound]
	payload  []byte
}

// BridgeBroker says which broker a BridgeRig runs through.
type BridgeBroker struct {
	// URL is an external broker's; "" starts the embedded broker.
	URL string
	// Persistent gives every bridge a persistent session (clean_session
	// false, robotexec's default); otherwise all have clean sessions.
	Persistent bool
	// ProducerURL, when not "", is where the producer publishes: another
	// node of URL's cluster. The URLs may hold credentials.
	ProducerURL string
}

// NewBridgeRig starts the bridge workload through the broker b says, with
// an executor of workers workers. Close stops it.
func NewBridgeRig(workers int, b BridgeBroker) (rig *BridgeRig, err error) {
	r := &BridgeRig{payload: bytes.Repeat([]byte("x"), BridgePayload)}
	defer func() {
		if err != nil {
			r.Close()
		}
	}()
	url := b.URL
	if url == "" {
		r.brk, err = broker.New(broker.Config{Listen: "127.0.0.1:0", Logger: discard})
		if err != nil {
			return nil, err
		}
		url = r.brk.URL()
	}
	id := fmt.Sprintf("robotexec-bench-%d-%d", os.Getpid(), time.Now().UnixNano())

	if err := r.startConsumer(url, id); err != nil {
		return nil, err
	}
	if err := r.startBridge(url, id, workers, b.Persistent); err != nil {
		return nil, err
	}
	r.raw, err = dialRaw(url, id+"-raw", !b.Persistent, bridgeWait)
	if err != nil {
		return nil, err
	}
	if err := r.raw.Forward("bench/in/raw", "bench/out/raw", BridgeQoS); err != nil {
		return nil, err
	}
	r.raw5, err = dialRaw5(url, id+"-raw5", !b.Persistent, bridgeWait, "bench/in/raw5", "bench/out/raw5", BridgeQoS)
	if err != nil {
		return nil, err
	}
	producerURL := url
	if b.ProducerURL != "" {
		producerURL = b.ProducerURL
	}
	r.producer, err = dialRaw(producerURL, id+"-producer", true, bridgeWait)
	if err != nil {
		return nil, err
	}
	// Warm every path up: connections, buffers, the executor's workers.
	for mode := range bridgeNames {
		if _, err := r.round(mode, 200, 0); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// startConsumer dials the consumer both bridges forward to; it counts
// the current round's messages.
func (r *BridgeRig) startConsumer(url, id string) error {
	var err error
	r.consumer, err = dialRaw(url, id+"-consumer", true, bridgeWait)
	if err != nil {
		return err
	}
	err = r.consumer.Subscribe("bench/out/#", BridgeQoS, func(topic string, _ []byte) {
		rd := r.cur.Load()
		if rd == nil || topic != rd.out {
			return
		}
		rd.last.Store(int64(time.Since(rd.start)))
		rd.got.Add(1)
		<-rd.window
	})
	if err != nil {
		return err
	}
	return nil
}

// startBridge runs robotexec's side: a bridge node, built as robotexec run
// builds it, on an executor of workers workers behind a client that
// connects as robotexec run does.
func (r *BridgeRig) startBridge(url, id string, workers int, persistent bool) error {
	// As robotexec run connects: in-process, with a status topic.
	var err error
	r.client, err = mqtt.Dial(mqtt.Config{Broker: url, ClientID: id + "-bridge", QoS: BridgeQoS, CleanSession: !persistent,
		InProcess: true, Logger: discard})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), bridgeWait)
	defer cancel()
	if err = r.client.WaitConnected(ctx); err != nil {
		return err
	}
	r.ex = executor.New(executor.Options{Workers: workers, Logger: discard})
	// The queue holds the whole window, with the Block policy: no message
	// is lost, and a full queue holds the broker back.
	block := subscribers.Block
	env := &nodes.Env{Executor: r.ex, Router: r.client.Router(), Logger: discard,
		QoS: BridgeQoS, Depth: BridgeWindow, Overflow: &block}
	cfg, err := config.Parse("bench.yaml", []byte(
		"nodes:\n  - name: bench_bridge\n    type: bridge\n    params: { from: bench/in/robotexec, to: bench/out/robotexec }\n"), nil)
	if err != nil {
		return err
	}
	r.node, err = nodes.Build(context.Background(), env, nodes.Spec{Name: "bench_bridge", Type: "bridge", Params: cfg.Nodes[0].Params})
	if err != nil {
		return err
	}
	runCtx, stop := context.WithCancel(context.Background())
	r.cancel, r.done = stop, make(chan error, 1)
	go func() { r.done <- r.ex.Run(runCtx) }()
	return nil
}

// RoundRobotexec forwards messages through robotexec's bridge for about d
// and returns how many arrived and the time until the last one did.
func (r *BridgeRig) RoundRobotexec(d time.Duration) (Rate, error) {
	return r.round(bridgeRobotexec, 0, d)
}

// RoundRaw is RoundRobotexec through the raw paho.mqtt.golang forwarder.
func (r *BridgeRig) RoundRaw(d time.Duration) (Rate, error) { return r.round(bridgeRaw, 0, d) }

// RoundRaw5 is RoundRobotexec through the raw paho.golang (MQTT 5)
// forwarder.
func (r *BridgeRig) RoundRaw5(d time.Duration) (Rate, error) { return r.round(bridgeRaw5, 0, d) }

// stalled is the error of a round of mode whose messages did not all
// arrive, with the raw5 forwarder's failed publication if it had one.
func (r *BridgeRig) stalled(mode int, what string, got int64, sent int) error {
	err := fmt.Errorf("mqtt bridge %s: %s: %d of %d sent forwarded", bridgeNames[mode], what, got, sent)
	if mode == bridgeRaw5 {
		if ferr := r.raw5.Err(); ferr != nil {
			err = fmt.Errorf("%w (%w)", err, ferr)
		}
	}
	return err
}

// round publishes to the mode's input, at most BridgeWindow messages in
// flight, n messages or (n == 0) as many as it can in d, and waits for
// them at the output.
func (r *BridgeRig) round(mode, n int, d time.Duration) (Rate, error) {
	name := bridgeNames[mode]
	rd := &bridgeRound{out: "bench/out/" + name, window: make(chan struct{}, BridgeWindow)}
	in := "bench/in/" + name
	stall := time.NewTimer(d + bridgeStall)
	defer stall.Stop()
	rd.start = time.Now()
	r.cur.Store(rd)
	defer r.cur.Store(nil)
	sent := 0
	for n == 0 || sent < n {
		if n == 0 && sent%64 == 0 && time.Since(rd.start) >= d {
			break
		}
		select {
		case rd.window <- struct{}{}:
		case <-stall.C:
			return Rate{}, r.stalled(mode, "stalled", rd.got.Load(), sent)
		}
		r.producer.Publish(in, BridgeQoS, r.payload)
		sent++
	}
	for rd.got.Load() < int64(sent) {
		select {
		case <-stall.C:
			return Rate{}, r.stalled(mode, "lost", rd.got.Load(), sent)
		default:
			time.Sleep(100 * time.Microsecond)
		}
	}
	if got := rd.got.Load(); got != int64(sent) {
		return Rate{}, fmt.Errorf("mqtt bridge %s: %d forwarded of %d sent", name, got, sent)
	}
	return Rate{Events: sent, Elapsed: time.Duration(rd.last.Load())}, nil
}

// Close stops the workload; it may be called on a partly started rig.
func (r *BridgeRig) Close() error {
	var errs []error
	if r.cancel != nil {
		r.cancel()
		errs = append(errs, <-r.done)
	}
	for _, c := range []*rawClient{r.producer, r.raw, r.consumer} {
		if c != nil {
			c.Close()
		}
	}
	if r.raw5 != nil {
		r.raw5.Close()
	}
	if r.client != nil {
		errs = append(errs, r.client.Close())
	}
	if r.brk != nil {
		errs = append(errs, r.brk.Close())
	}
	return errors.Join(errs...)
}
