package robotexec_test

// End-to-end tests of the message path through an external broker under
// faults, as a robot meets them: robotexec run on a heartbeat → stage →
// sink pipeline with an outside subscriber, mosquitto paused, a slow link,
// a reconnection; a QoS 1 burst through a bridge. The sink must get every
// message once, in order, and so must the outside subscriber, but for the
// redeliveries that QoS 1 allows after a reconnection.

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/mqtt/broker"
	"github.com/robotexec/robotexec/internal/mqtttest"
)

// outsider is another client of the broker: it counts the messages of a
// filter by their "seq" (heartbeats) or by their payload.
type outsider struct {
	c    paho.Client
	mu   sync.Mutex
	seqs map[uint64]int
	n    int
}

func newOutsider(t *testing.T, url, filter string) *outsider {
	t.Helper()
	o := &outsider{seqs: map[uint64]int{}}
	o.c = paho.NewClient(paho.NewClientOptions().AddBroker(url).SetClientID(fmt.Sprintf("outsider-%d", time.Now().UnixNano())).
		SetOrderMatters(true).SetAutoReconnect(true))
	tok := o.c.Connect()
	require.True(t, tok.WaitTimeout(traffic) && tok.Error() == nil, "outsider connect: %v", tok.Error())
	tok = o.c.Subscribe(filter, 1, func(_ paho.Client, m paho.Message) { o.add(m.Payload()) })
	require.True(t, tok.WaitTimeout(traffic) && tok.Error() == nil, "outsider subscribe: %v", tok.Error())
	t.Cleanup(func() { o.c.Disconnect(100) })
	return o
}

func (o *outsider) add(p []byte) {
	var b struct{ Seq uint64 }
	_ = json.Unmarshal(p, &b)
	o.mu.Lock()
	o.seqs[b.Seq]++
	o.n++
	o.mu.Unlock()
}

// has reports whether every seq from 1 to last arrived.
func (o *outsider) has(last uint64) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	for s := uint64(1); s <= last; s++ {
		if o.seqs[s] == 0 {
			return false
		}
	}
	return true
}

// last returns the highest seq that arrived.
func (o *outsider) last() uint64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	var m uint64
	for s := range o.seqs {
		m = max(m, s)
	}
	return m
}

// missing returns how many seqs from 1 to last did not arrive, and the
// first of them.
func (o *outsider) missing(last uint64) (int, []uint64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	var first []uint64
	for s := uint64(1); s <= last; s++ {
		if o.seqs[s] == 0 {
			n++
			if len(first) < 20 {
				first = append(first, s)
			}
		}
	}
	return n, first
}

// check waits until every seq from 1 to last arrived, and returns how many
// arrived more than once.
func (o *outsider) check(t *testing.T, last uint64) (dups int) {
	t.Helper()
	return o.checkAllowing(t, last, 0)
}

// checkAllowing is check that allows up to missing seqs to stay missing
// (given two seconds to come).
func (o *outsider) checkAllowing(t *testing.T, last uint64, missing int) (dups int) {
	t.Helper()
	start := time.Now()
	for !o.has(last) {
		n, first := o.missing(last)
		if n <= missing && time.Since(start) > 2*time.Second {
			break
		}
		require.Less(t, time.Since(start), traffic, "the outside subscriber misses %d of seq 1..%d: %v...", n, last, first)
		time.Sleep(10 * time.Millisecond)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, n := range o.seqs {
		dups += n - 1
	}
	return dups
}

// TestPipelineThroughBrokerFaults runs a 500 Hz heartbeat → stage → sink
// pipeline (QoS 1, in-process, the defaults) with an outside subscriber
// of the stage's output, through each fault, on mosquitto and on the
// embedded broker of another robotexec process, in MQTT 5 and 3.1.1.
// Paused (15 s with MQTT 5: longer than any age an echo was once given;
// no reconnection) and behind a link throttled to 40 KB/s, less than the
// pipeline's traffic, nothing is lost or duplicated, at the sink or
// outside. After a reconnection of a clean session nothing is lost, and
// only the publications in flight at the cut may come twice (QoS 1 is at
// least once): outside, and with MQTT 3.1.1, where every hop goes through
// the broker, at the sink; and with MQTT 3.1.1, what the broker had not
// delivered to the stage's clean session at the cut is lost (MQTT 5 keeps
// the stage local).
func TestPipelineThroughBrokerFaults(t *testing.T) {
	t.Parallel()
	for _, b := range []string{"mosquitto", "embedded"} {
		for _, protocol := range []string{"5", "3.1.1"} {
			for _, f := range pipelineFaults {
				t.Run(b+"/"+protocol+"/"+f.name, func(t *testing.T) {
					t.Parallel()
					pipelineThroughFault(t, b, protocol, f)
				})
			}
		}
	}
}

// pipelineFault is a fault of TestPipelineThroughBrokerFaults.
type pipelineFault struct {
	name  string
	clean bool
	fault func(t *testing.T, b faultBroker, p *mqtttest.Proxy, protocol string)
}

var pipelineFaults = []pipelineFault{
	{"paused", false, func(t *testing.T, b faultBroker, _ *mqtttest.Proxy, protocol string) {
		d := 15 * time.Second
		if protocol != "5" {
			d = 5 * time.Second
		}
		b.pause(t)
		time.Sleep(d)
		b.resume(t)
	}},
	{"throttled link", false, func(_ *testing.T, _ faultBroker, p *mqtttest.Proxy, _ string) {
		p.Throttle(40 << 10)
		time.Sleep(5 * time.Second)
		p.Throttle(0)
	}},
	{"clean reconnection", true, func(_ *testing.T, _ faultBroker, p *mqtttest.Proxy, _ string) {
		p.Refuse(true)
		p.Cut()
		time.Sleep(2 * time.Second)
		p.Refuse(false)
	}},
}

// faultBroker is a broker that a test can pause: mosquitto, or another
// robotexec process's embedded broker.
type faultBroker struct {
	url, addr     string
	pause, resume func(t *testing.T)
}

func newFaultBroker(t *testing.T, kind string) faultBroker {
	if kind == "mosquitto" {
		m := mqtttest.Mosquitto(t, mqtttest.MosquittoOptions{Persistence: true})
		return faultBroker{url: m.URL(), addr: m.Addr(),
			pause: func(*testing.T) { m.Pause() }, resume: func(*testing.T) { m.Continue() }}
	}
	port := freePort(t)
	path := filepath.Join(t.TempDir(), "broker.yaml")
	writeFile(t, path, fmt.Sprintf("mqtt: { listen: 127.0.0.1:%d, client_id: broker-%d }\n", port, port))
	p := startRun(t, robotexecBin, path)
	return faultBroker{url: brokerURL(port), addr: fmt.Sprintf("127.0.0.1:%d", port),
		pause:  func(t *testing.T) { p.signal(t, syscall.SIGSTOP) },
		resume: func(t *testing.T) { p.signal(t, syscall.SIGCONT) }}
}

func pipelineThroughFault(t *testing.T, kind, protocol string, f pipelineFault) {
	b := newFaultBroker(t, kind)
	proxy := mqtttest.NewProxy(t, b.addr)
	out := newOutsider(t, b.url, "p/1")
	r := startPipeline(t, pipelineOptions{broker: proxy.URL(), inProcess: true,
		mqtt: fmt.Sprintf(", clean_session: %v, protocol: %s", f.clean, protocol), nodes: faultPipeline})
	waitRuns(t, r, 100)
	f.fault(t, b, proxy, protocol)
	deadline := time.Now().Add(traffic)
	for r.metric(t, "robotexec_mqtt_connected") != 1 {
		require.True(t, time.Now().Before(deadline), "not connected again")
		time.Sleep(50 * time.Millisecond)
	}
	waitRuns(t, r, r.sinkRuns(t)+100)
	// The publications held during the fault go to the broker before the
	// stop, which gives them 2 s: the outside catches up with the sink.
	caughtUp := uint64(r.sinkRuns(t))
	deadline = time.Now().Add(traffic)
	for out.last() < caughtUp {
		require.True(t, time.Now().Before(deadline), "the outside subscriber is at seq %d, the sink ran %d times", out.last(), caughtUp)
		time.Sleep(50 * time.Millisecond)
	}
	maxDups, lost := 0, 0
	if f.clean {
		maxDups = 100 // at most the publications in flight at the cut
	}
	sinkDups := maxDups
	if protocol == "5" {
		sinkDups = 0 // every hop local
	} else if f.clean {
		lost = 20 // at most what the broker was delivering at the cut
	}
	received, last := r.stopAllowing(t, sinkDups, lost)
	dups := out.checkAllowing(t, uint64(last), lost)
	t.Logf("sink %d for %d seqs; outside duplicates %d", received, last, dups)
	require.LessOrEqual(t, dups, maxDups)
}

// faultPipeline is TestPipelineThroughBrokerFaults's: a heartbeat at 500
// Hz through a stage to a sink.
const faultPipeline = "  - { name: source, type: heartbeat, params: { topic: p/0, period: 2ms } }\n" +
	"  - { name: stage, type: stage, params: { input: p/0, output: p/1 } }\n" +
	"  - { name: sink, type: sink, params: { input: p/1 } }\n"

// waitRuns waits until the sink has run n times.
func waitRuns(t *testing.T, r *pipelineRun, n float64) {
	t.Helper()
	deadline := time.Now().Add(traffic)
	for r.sinkRuns(t) < n {
		require.True(t, time.Now().Before(deadline), "the sink did not run %.0f times within %v", n, traffic)
		time.Sleep(50 * time.Millisecond)
	}
}

// TestQoS1BurstThroughBridge: a bridge with the default settings (a queue
// of 10; at QoS 1 its policy is block) forwards a burst of 4,000 QoS 1
// messages whole, through mosquitto and the embedded broker: the bridge's
// full queue holds back the client's acknowledgements, and so the broker,
// instead of dropping what the broker delivered.
func TestQoS1BurstThroughBridge(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"embedded", "mosquitto"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			url := "embedded"
			if name == "mosquitto" {
				url = mqtttest.Mosquitto(t, mqtttest.MosquittoOptions{}).URL()
			}
			r := startPipeline(t, pipelineOptions{broker: url, inProcess: true,
				nodes: "  - { name: relay, type: bridge, params: { from: 'in/#', to: 'out/#' } }\n"})
			out := newOutsider(t, r.url, "out/#")
			const n = 4000
			pub := paho.NewClient(paho.NewClientOptions().AddBroker(r.url).SetClientID("burst-" + name))
			tok := pub.Connect()
			require.True(t, tok.WaitTimeout(traffic) && tok.Error() == nil)
			defer pub.Disconnect(100)
			var last paho.Token
			for i := 1; i <= n; i++ {
				last = pub.Publish("in/x", 1, false, fmt.Sprintf(`{"seq":%d}`, i))
			}
			require.True(t, last.WaitTimeout(traffic) && last.Error() == nil)
			require.Zero(t, out.check(t, n), "duplicates")
			require.Zero(t, r.metric(t, `robotexec_messages_dropped_total{callback="bridge",node="relay",reason="queue_full"}`))
			r.signal(t, os.Interrupt)
			require.Equal(t, 0, r.wait(t, stopWithin))
		})
	}
}

// flappingProxy forwards connections to a broker, but closes each of the
// first flaps connections as soon as the broker's first bytes (its
// CONNACK) went through: a broker that accepts and drops clients.
type flappingProxy struct {
	ln     net.Listener
	target string
	flaps  atomic.Int32
}

func newFlappingProxy(t *testing.T, target string, flaps int) *flappingProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &flappingProxy{ln: ln, target: target}
	p.flaps.Store(int32(flaps))
	go p.serve()
	t.Cleanup(func() { _ = ln.Close() })
	return p
}

func (p *flappingProxy) url() string { return "tcp://" + p.ln.Addr().String() }

func (p *flappingProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.pass(c)
	}
}

func (p *flappingProxy) pass(c net.Conn) {
	defer c.Close()
	b, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer b.Close()
	go func() { _, _ = io.Copy(b, c) }()
	if p.flaps.Add(-1) >= 0 {
		buf := make([]byte, 64)
		if n, err := b.Read(buf); err == nil {
			_, _ = c.Write(buf[:n])
		}
		return
	}
	_, _ = io.Copy(c, b)
}

// TestFlappingBroker: a broker that closes each of the first connections
// right after its CONNACK. robotexec's QoS 1 publications of that time,
// its graph topic and a heartbeat's, all arrive, none dropped: nothing is
// guessed from a connection's end (MQTT 5 says a refusal with a reason
// code).
func TestFlappingBroker(t *testing.T) {
	t.Parallel()
	for _, name := range brokerNames {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testFlappingBroker(t, externalBroker(t, name, broker.Config{}, mqtttest.MosquittoOptions{}))
		})
	}
}

func testFlappingBroker(t *testing.T, m mqtttest.Broker) {
	out := newOutsider(t, m.URL(), "robot/heartbeat")
	graph := newOutsider(t, m.URL(), "robotexec/+/graph")
	flap := newFlappingProxy(t, m.Addr(), 4)
	r := startPipeline(t, pipelineOptions{broker: flap.url(), inProcess: true,
		nodes: "  - { name: beat, type: heartbeat, params: { topic: robot/heartbeat, period: 10ms } }\n"})
	deadline := time.Now().Add(traffic)
	for r.metric(t, "robotexec_mqtt_connected") != 1 {
		require.True(t, time.Now().Before(deadline), "not connected")
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	require.Zero(t, r.metric(t, "robotexec_mqtt_publish_failures_total"))
	r.signal(t, os.Interrupt)
	require.Equal(t, 0, r.wait(t, stopWithin))
	// Every seq from the first, published while the broker flapped, to
	// the last that arrived.
	// Over the 0.5 s after the connection, at 100 Hz: 50 beats, fewer
	// on a loaded machine (a late period is skipped).
	last := out.last()
	require.Greater(t, last, uint64(20))
	require.Zero(t, out.check(t, last), "duplicates")
	require.NotContains(t, strings.Join(r.stderr.all(), "\n"), "dropped")
	graph.mu.Lock()
	defer graph.mu.Unlock()
	require.Positive(t, graph.n, "the graph topic")
}
