package mqtt_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/internal/mqtt/broker"
	"github.com/robotexec/robotexec/internal/mqtttest"
	"github.com/robotexec/robotexec/subscribers"
)

// BenchmarkBridge measures forwarding throughput: messages published to
// bench/in/MODE, forwarded by a bridge to bench/out/MODE, counted by a
// consumer, all through one embedded broker. The bridge is robotexec (an
// MQTT subscription, the executor, a callback that publishes through an
// MQTT publisher) or, as the baseline, a raw paho client whose message
// handler republishes directly. Both run in the same benchmark, in
// alternating rounds, with at most window messages in flight end to end
// (so that no broker queue overflows). It reports both rates and their
// ratio, robotexec / raw.
func BenchmarkBridge(b *testing.B) {
	for _, qos := range []byte{0, 1} {
		b.Run(fmt.Sprintf("qos%d", qos), func(b *testing.B) { benchBridge(b, qos) })
	}
}

const window = 2000

func benchBridge(b *testing.B, qos byte) {
	discard := slog.New(slog.DiscardHandler)
	brk := mqtttest.Embedded(b, broker.Config{Logger: discard})
	url := brk.URL()

	// The consumer counts the forwarded messages of the current round and
	// frees a slot of the window for each.
	var cur atomic.Pointer[round]
	consumer := benchPaho(b, url, "consumer")
	subscribeOrFail(b, consumer, "bench/out/#", qos, func(_ paho.Client, m paho.Message) {
		r := cur.Load()
		if r == nil || m.Topic() != r.out {
			return
		}
		<-r.window
		if r.got.Add(1) == r.n {
			close(r.done)
		}
	})

	// robotexec's bridge.
	c, err := mqtt.Dial(mqtt.Config{Broker: url, ClientID: clientID(b, "bridge"), QoS: qos, CleanSession: true, StatusTopic: "-", Logger: discard})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	if err := c.WaitConnected(ctx); err != nil {
		b.Fatal(err)
	}
	out, err := c.Publisher("bench/out/robotexec", bus.WithQoS(qos))
	if err != nil {
		b.Fatal(err)
	}
	ex := executor.New(executor.Options{Workers: 2, Logger: discard})
	var pubErrs atomic.Int64
	_, err = ex.NewOwner("bridge", nil).Subscribe(c, "bench/in/robotexec", func(ctx context.Context, m subscribers.Message) {
		if out.Publish(ctx, m.Payload) != nil {
			pubErrs.Add(1)
		}
	}, executor.Depth(1000), executor.Overflow(subscribers.Block))
	if err != nil {
		b.Fatal(err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ex.Run(runCtx) }()
	defer func() { stop(); <-done }()

	// The raw paho bridge.
	raw := benchPaho(b, url, "raw")
	subscribeOrFail(b, raw, "bench/in/raw", qos, func(cl paho.Client, m paho.Message) {
		cl.Publish("bench/out/raw", qos, false, m.Payload())
	})

	producer := benchPaho(b, url, "producer")
	payload := bytes.Repeat([]byte("x"), 64)
	names := [2]string{"robotexec", "raw"}
	var cpu [2]time.Duration
	run := func(mode int, n int) time.Duration {
		cpu0 := cpuTime()
		defer func() { cpu[mode] += cpuTime() - cpu0 }()
		r := &round{out: "bench/out/" + names[mode], n: int64(n), window: make(chan struct{}, window), done: make(chan struct{})}
		cur.Store(r)
		defer cur.Store(nil)
		in := "bench/in/" + names[mode]
		timeout := time.After(time.Minute)
		start := time.Now()
		for range n {
			select {
			case r.window <- struct{}{}:
			case <-timeout:
				b.Fatalf("%s: stalled after %d of %d", in, r.got.Load(), n)
			}
			producer.Publish(in, qos, false, payload)
		}
		select {
		case <-r.done:
		case <-timeout:
			b.Fatalf("%s: forwarded %d of %d", in, r.got.Load(), n)
		}
		return time.Since(start)
	}
	// Warm both paths up before measuring.
	run(0, 200)
	run(1, 200)
	cpu = [2]time.Duration{}

	b.ReportAllocs()
	b.ResetTimer()
	const rounds = 8
	var spent [2]time.Duration
	var sent [2]int
	for r := 0; r < rounds; r++ {
		n := b.N / rounds
		if r == rounds-1 {
			n = b.N - (rounds-1)*(b.N/rounds)
		}
		if n == 0 {
			continue
		}
		for _, mode := range [][2]int{{0, 1}, {1, 0}}[r%2] {
			spent[mode] += run(mode, n)
			sent[mode] += n
		}
	}
	b.StopTimer()
	if pubErrs.Load() > 0 {
		b.Fatalf("%d publications failed", pubErrs.Load())
	}
	rx := float64(sent[0]) / spent[0].Seconds()
	rw := float64(sent[1]) / spent[1].Seconds()
	b.ReportMetric(rx, "robotexec_msgs/s")
	b.ReportMetric(rw, "raw_msgs/s")
	b.ReportMetric(rx/rw, "ratio")
	// The process's CPU time per forwarded message (broker, producer and
	// consumer included, the same for both): less sensitive than the
	// rates to other load on the machine.
	cx := float64(cpu[0].Microseconds()) / float64(sent[0])
	cw := float64(cpu[1].Microseconds()) / float64(sent[1])
	b.ReportMetric(cx, "robotexec_cpu_us/msg")
	b.ReportMetric(cw, "raw_cpu_us/msg")
}

// cpuTime returns the CPU time the process used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// round is one measured run of a bridge.
type round struct {
	out    string // the topic forwarded messages arrive on
	n      int64
	got    atomic.Int64
	window chan struct{} // one element per message in flight
	done   chan struct{} // closed when n messages arrived
}

func benchPaho(b *testing.B, url, name string) paho.Client {
	o := paho.NewClientOptions().AddBroker(url).SetClientID(clientID(b, name)).
		SetProtocolVersion(4).SetCleanSession(true).SetOrderMatters(true)
	c := paho.NewClient(o)
	if tok := c.Connect(); !tok.WaitTimeout(waitFor) || tok.Error() != nil {
		b.Fatalf("%s: connect: %v", name, tok.Error())
	}
	b.Cleanup(func() { c.Disconnect(100) })
	return c
}

func subscribeOrFail(b *testing.B, c paho.Client, filter string, qos byte, h paho.MessageHandler) {
	if tok := c.Subscribe(filter, qos, h); !tok.WaitTimeout(waitFor) || tok.Error() != nil {
		b.Fatalf("subscribe %s: %v", filter, tok.Error())
	}
}
