package robotexec_test

// BenchmarkRecord: how fast robotexec record keeps up with small payloads
// from the embedded broker, beside a plain paho subscriber in the same run.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/robotexec/robotexec/internal/mqtttest"
)

const (
	recBenchMsgs    = 200_000 // data messages per phase
	recBenchPubs    = 4       // publisher clients, each on a topic of its own
	recBenchPayload = 64      // bytes a message
	clockTicks      = 100     // USER_HZ: the unit of /proc/PID/stat's times
)

// BenchmarkRecord measures how fast `robotexec record` keeps up with
// 64-byte QoS 0 payloads from the embedded broker of a `robotexec run`
// without nodes. Each iteration has two phases, in alternating order: a
// new recorder on bench/#, and a plain paho subscriber on bench/# (the
// baseline), each fed 200,000 messages by 4 paho publishers, either as
// fast as the broker takes them (rate=max) or paced at 100,000 messages/s
// (rate=100000). A phase ends when the subscriber has the publishers'
// end markers (or stops receiving). Each iteration is logged, also the
// single one go test runs before -benchtime's count, which the metrics
// leave out.
//
// Metrics (rates and CPU: medians over the iterations; losses: sums):
//   - rec-msgs/s: messages recorded / (last one's log time - first publication)
//   - sub-msgs/s: the same for the paho subscriber, in the same process as the publishers
//   - rec/sub: the median of the iterations' ratios of the two
//   - offered-msgs/s, offered-sub-msgs/s: the publishers' rate in each phase
//   - rec-lost, sub-lost: messages published and not recorded (received)
//   - rec-dropped: the recorder's own drops, from its last line
//   - rec-cpu: the recorder's CPU seconds (user + system) per second of the phase
//   - broker-cpu: the broker process's, in the recorder's phase
//   - others-cpu: the largest over the phases of the machine's CPU (user
//     and system, /proc/stat) less the processes above: another workload
//     on the machine shows here
//
// Run it with:
//
//	go test -run '^$' -bench BenchmarkRecord -benchtime 3x .
func BenchmarkRecord(b *testing.B) {
	for _, rate := range []int{0, 100_000} {
		name := "rate=max"
		if rate > 0 {
			name = fmt.Sprintf("rate=%d", rate)
		}
		b.Run(name, func(b *testing.B) { benchRecord(b, rate) })
	}
}

// recPhase is what one phase measured.
type recPhase struct {
	got           int // messages recorded (received)
	dropped       int // the recorder's own count
	rate, offered float64
	lag           time.Duration // the last message's receipt after the last publication
	// CPU seconds per second, from the first publication to the last
	// message's receipt: the recorder's, the broker's, the benchmark
	// process's (publishers, paho subscriber) and the rest of the
	// machine's.
	cpu, broker, pubs, others float64
}

func benchRecord(b *testing.B, rate int) {
	port := mqtttest.FreePort(b)
	url := brokerURL(port)
	cfg := filepath.Join(b.TempDir(), "broker.yaml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, "mqtt: { broker: embedded, listen: 127.0.0.1:%d }\nnodes: []\n", port), 0o644); err != nil {
		b.Fatal(err)
	}
	broker := startBenchProc(b, "run", cfg)
	ctx, cancel := context.WithTimeout(context.Background(), startup)
	_, err := broker.stderr.await(ctx, func(s string) bool { return strings.Contains(s, "robotexec running") })
	cancel()
	if err != nil {
		b.Fatalf("robotexec run: %v\n%s", err, broker)
	}
	pubs := make([]paho.Client, recBenchPubs)
	for i := range pubs {
		pubs[i] = benchClient(b, url, fmt.Sprintf("bench-pub-%d", i))
		b.Cleanup(func() { pubs[i].Disconnect(100) })
	}
	payload := []byte(strings.Repeat("x", recBenchPayload))

	var rec, sub []recPhase
	var ratios []float64
	b.ResetTimer()
	for i := range b.N {
		var r, s recPhase
		if i%2 == 0 {
			r = recordPhase(b, url, broker, pubs, payload, rate, i)
			s = subscribePhase(b, url, broker, pubs, payload, rate)
		} else {
			s = subscribePhase(b, url, broker, pubs, payload, rate)
			r = recordPhase(b, url, broker, pubs, payload, rate, i)
		}
		b.Logf("iteration %d: recorder %d msgs at %.0f/s (offered %.0f/s, lag %v), %d dropped, cpu %.2f, broker %.2f, publishers %.2f, others %.2f; "+
			"paho subscriber %d msgs at %.0f/s (offered %.0f/s, lag %v), broker %.2f, publishers and subscriber %.2f, others %.2f",
			i, r.got, r.rate, r.offered, r.lag.Round(time.Millisecond), r.dropped, r.cpu, r.broker, r.pubs, r.others,
			s.got, s.rate, s.offered, s.lag.Round(time.Millisecond), s.broker, s.pubs, s.others)
		rec, sub = append(rec, r), append(sub, s)
		ratios = append(ratios, r.rate/s.rate)
	}
	b.StopTimer()
	med := func(ps []recPhase, f func(recPhase) float64) float64 {
		vs := make([]float64, len(ps))
		for i, p := range ps {
			vs[i] = f(p)
		}
		return median(vs)
	}
	var recLost, subLost, dropped, others float64
	for i := range rec {
		recLost += float64(recBenchMsgs - rec[i].got)
		subLost += float64(recBenchMsgs - sub[i].got)
		dropped += float64(rec[i].dropped)
		others = max(others, rec[i].others, sub[i].others)
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(med(rec, func(p recPhase) float64 { return p.rate }), "rec-msgs/s")
	b.ReportMetric(med(sub, func(p recPhase) float64 { return p.rate }), "sub-msgs/s")
	b.ReportMetric(median(ratios), "rec/sub")
	b.ReportMetric(med(rec, func(p recPhase) float64 { return p.offered }), "offered-msgs/s")
	b.ReportMetric(med(sub, func(p recPhase) float64 { return p.offered }), "offered-sub-msgs/s")
	b.ReportMetric(recLost, "rec-lost")
	b.ReportMetric(subLost, "sub-lost")
	b.ReportMetric(dropped, "rec-dropped")
	b.ReportMetric(med(rec, func(p recPhase) float64 { return p.cpu }), "rec-cpu")
	b.ReportMetric(med(rec, func(p recPhase) float64 { return p.broker }), "broker-cpu")
	b.ReportMetric(others, "others-cpu")
}

// recordPhase starts a recorder, waits until it records, publishes, waits
// until it has recorded everything that reaches it, and stops it.
func recordPhase(b *testing.B, url string, broker *proc, pubs []paho.Client, payload []byte, rate, i int) recPhase {
	path := filepath.Join(b.TempDir(), fmt.Sprintf("rec-%d.mcap", i))
	rec := startBenchProc(b, "record", "-broker", url, "-o", path, "bench/#")
	// The recorder is subscribed once a probe is in its file (a chunk is
	// written at least once a second).
	deadline := time.Now().Add(traffic)
	for scanBench(b, path, false).probes == 0 {
		if time.Now().After(deadline) || rec.hasExited() {
			b.Fatalf("no probe recorded within %v\n%s", traffic, rec)
		}
		pubs[0].Publish("bench/probe", 1, false, "probe").WaitTimeout(traffic)
		time.Sleep(200 * time.Millisecond)
	}
	cs := sampleCPU(rec.cmd.Process.Pid, broker.cmd.Process.Pid, os.Getpid())
	start, end, offered := publishAll(b, pubs, payload, rate)
	// Until the file holds the end markers, or no more messages than at
	// the last look.
	var s benchScan
	for prev := -1; ; prev = s.data {
		time.Sleep(1100 * time.Millisecond) // the chunk being filled is written
		s = scanBench(b, path, true)
		if s.ends == len(pubs) || s.data == prev || time.Now().After(deadline.Add(time.Minute)) {
			break
		}
	}
	cpu := cs.end(start, s.last)
	if err := rec.cmd.Process.Signal(os.Interrupt); err != nil {
		b.Fatal(err)
	}
	select {
	case <-rec.exited:
	case <-time.After(stopWithin):
		b.Fatalf("the recorder did not exit within %v of SIGINT\n%s", stopWithin, rec)
	}
	line, _ := rec.stderr.find(func(l string) bool { return strings.Contains(l, "messages recorded to") })
	m := regexp.MustCompile(`(\d+) messages recorded to .*, (\d+) dropped`).FindStringSubmatch(line)
	if m == nil || rec.cmd.ProcessState.ExitCode() != 0 {
		b.Fatalf("the recorder's last line is missing or it failed\n%s", rec)
	}
	dropped, _ := strconv.Atoi(m[2])
	s = scanBench(b, path, true)
	span := s.last.Sub(start).Seconds()
	return recPhase{got: s.data, dropped: dropped, rate: float64(s.data) / span, offered: offered, lag: s.last.Sub(end),
		cpu: cpu[1], broker: cpu[2], pubs: cpu[3], others: cpu[0] - cpu[1] - cpu[2] - cpu[3]}
}

// subscribePhase does what recordPhase does with a paho subscriber.
func subscribePhase(b *testing.B, url string, broker *proc, pubs []paho.Client, payload []byte, rate int) recPhase {
	var got, ends, last atomic.Int64 // last: UnixNano
	c := benchClient(b, url, "bench-sub")
	defer c.Disconnect(0)
	tok := c.Subscribe("bench/#", 1, func(_ paho.Client, m paho.Message) {
		switch {
		case strings.HasPrefix(m.Topic(), "bench/p/"):
			got.Add(1)
			last.Store(time.Now().UnixNano())
		case m.Topic() == "bench/end":
			ends.Add(1)
		}
	})
	if !tok.WaitTimeout(traffic) || tok.Error() != nil {
		b.Fatalf("subscribe: %v", tok.Error())
	}
	cs := sampleCPU(broker.cmd.Process.Pid, os.Getpid())
	start, end, offered := publishAll(b, pubs, payload, rate)
	for prev := int64(-1); ends.Load() < int64(len(pubs)) && got.Load() != prev; {
		prev = got.Load()
		time.Sleep(500 * time.Millisecond)
	}
	lastAt := time.Unix(0, last.Load())
	cpu := cs.end(start, lastAt)
	return recPhase{got: int(got.Load()), rate: float64(got.Load()) / lastAt.Sub(start).Seconds(), offered: offered,
		lag: lastAt.Sub(end), broker: cpu[1], pubs: cpu[2], others: cpu[0] - cpu[1] - cpu[2]}
}

// publishAll publishes recBenchMsgs messages, shared among the
// publishers, as fast as they go or paced at rate, then an end marker
// from each with QoS 1, which reaches a subscriber after the publisher's
// other messages. It returns when it started, when the last data message
// was written, and the rate in between.
func publishAll(b *testing.B, pubs []paho.Client, payload []byte, rate int) (start, end time.Time, offered float64) {
	per := recBenchMsgs / len(pubs)
	errs := make([]error, len(pubs))
	var wg sync.WaitGroup
	start = time.Now()
	for i, c := range pubs {
		wg.Go(func() {
			topic := fmt.Sprintf("bench/p/%d", i)
			var tok paho.Token
			for k := range per {
				if rate > 0 {
					due := start.Add(time.Duration(float64(k*len(pubs)+i) * 1e9 / float64(rate)))
					if d := time.Until(due); d > 0 {
						time.Sleep(d)
					}
				}
				tok = c.Publish(topic, 0, false, payload)
			}
			if !tok.WaitTimeout(traffic) || tok.Error() != nil {
				errs[i] = fmt.Errorf("publisher %d: %v", i, tok.Error())
			}
		})
	}
	wg.Wait()
	end = time.Now()
	offered = float64(per*len(pubs)) / end.Sub(start).Seconds()
	for i, c := range pubs {
		if tok := c.Publish("bench/end", 1, false, strconv.Itoa(i)); !tok.WaitTimeout(traffic) || tok.Error() != nil {
			errs = append(errs, fmt.Errorf("end marker %d: %v", i, tok.Error()))
		}
	}
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	return start, end, offered
}

// benchScan is what a recording holds of the benchmark's messages.
type benchScan struct {
	probes, data, ends int
	last               time.Time // the last data message's log time
}

// scanBench reads the recording at path with robotexec info -json; a
// file not written yet, or not readable yet, holds nothing unless must.
func scanBench(b *testing.B, path string, must bool) benchScan {
	var s benchScan
	out, err := exec.Command(robotexecBin, "info", "-json", path).Output()
	var in info
	if err == nil {
		err = json.Unmarshal(out, &in)
	}
	if err != nil {
		if must {
			b.Fatalf("robotexec info -json %s: %v\n%s", path, err, out)
		}
		return s
	}
	for _, t := range in.Topics {
		switch {
		case strings.HasPrefix(t.Topic, "bench/p/"):
			s.data += t.Messages
			if t.Last.After(s.last) {
				s.last = t.Last
			}
		case t.Topic == "bench/end":
			s.ends += t.Messages
		case t.Topic == "bench/probe":
			s.probes += t.Messages
		}
	}
	return s
}

func benchClient(b *testing.B, url, id string) paho.Client {
	c := paho.NewClient(paho.NewClientOptions().AddBroker(url).SetClientID(id).SetAutoReconnect(false))
	if tok := c.Connect(); !tok.WaitTimeout(traffic) || tok.Error() != nil {
		b.Fatalf("connect %s: %v", id, tok.Error())
	}
	return c
}

// startBenchProc starts robotexecBin with args, as startProc does for
// tests; the process is killed at the end of the benchmark if it still
// runs.
func startBenchProc(b *testing.B, args ...string) *proc {
	p := &proc{cmd: exec.Command(robotexecBin, args...), stdout: newLineLog(), stderr: newLineLog(), exited: make(chan struct{})}
	p.cmd.Env = testEnv()
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	p.cmd.WaitDelay = 5 * time.Second
	if err := p.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	go func() {
		_ = p.cmd.Wait()
		p.stdout.close()
		p.stderr.close()
		close(p.exited)
	}()
	b.Cleanup(func() {
		if !p.hasExited() {
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	})
	return p
}

func median(vs []float64) float64 {
	s := slices.Sorted(slices.Values(vs))
	return (s[(len(s)-1)/2] + s[len(s)/2]) / 2
}
