package robotexec_test

// End-to-end tests of robotexec topic hz and topic bw: the real binary
// watching heartbeats of robotexec run on its embedded broker, and a
// stream of known rate and size through mosquitto.

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/mqtttest"
)

// hzLine and bwLine are the JSON reports of topic hz and topic bw.
type hzLine struct {
	Topic   string  `json:"topic"`
	RateHz  float64 `json:"rate_hz"`
	MinS    float64 `json:"min_s"`
	MaxS    float64 `json:"max_s"`
	StdDevS float64 `json:"std_dev_s"`
	Window  int     `json:"window"`
}

type bwLine struct {
	Topic     string  `json:"topic"`
	BytesPerS float64 `json:"bytes_per_s"`
	Messages  int     `json:"messages"`
	MeanB     float64 `json:"mean_b"`
	MinB      int     `json:"min_b"`
	MaxB      int     `json:"max_b"`
}

// reportsWithin bounds a topic hz|bw -n 3: three reports a second apart,
// after connecting.
const reportsWithin = quickExit + 3*time.Second

// startRate starts topic hz|bw -broker url ARGS.
func startRate(t *testing.T, url, verb string, args ...string) *proc {
	t.Helper()
	return startProc(t, robotexecBin, nil, append([]string{"topic", verb, "-broker", url}, args...)...)
}

// startReports starts topic hz|bw -json -n n ARGS on url.
func startReports(t *testing.T, url, verb string, n int, args ...string) *proc {
	t.Helper()
	return startRate(t, url, verb, append([]string{"-json", "-n", fmt.Sprint(n)}, args...)...)
}

// reports waits for p, started by startReports with n, to exit 0 and
// returns its reports, after checking that it printed exactly n, and
// nothing on stderr.
func reports[T any](t *testing.T, p *proc, n int) []T {
	t.Helper()
	require.Equal(t, 0, p.wait(t, reportsWithin), "%s", p)
	require.Empty(t, p.stderr.all(), "%s", p)
	ls := p.stdout.all()
	require.Len(t, ls, n, "%d reports: %s", n, p)
	out := make([]T, n)
	for i, l := range ls {
		dec := json.NewDecoder(strings.NewReader(l))
		dec.DisallowUnknownFields()
		require.NoError(t, dec.Decode(&out[i]), "report %q", l)
	}
	return out
}

// output waits for p to exit with code and returns its stdout and stderr.
func output(t *testing.T, p *proc, code int) (stdout, stderr string) {
	t.Helper()
	require.Equal(t, code, p.wait(t, reportsWithin), "%s", p)
	join := func(ls []string) string {
		if len(ls) == 0 {
			return ""
		}
		return strings.Join(ls, "\n") + "\n"
	}
	return join(p.stdout.all()), join(p.stderr.all())
}

// requireHz checks the last of hz's reports: a rate the stream had over
// a window of that many messages (see arrivals.requireRate), and figures
// that agree with each other.
func requireHz(t *testing.T, rs []hzLine, topic string, stream *arrivals) hzLine {
	t.Helper()
	for _, r := range rs {
		require.Equal(t, topic, r.Topic)
		require.GreaterOrEqual(t, r.Window, 2, "%+v", r)
	}
	last := rs[len(rs)-1]
	stream.requireRate(t, last.RateHz, last.Window, last)
	require.LessOrEqual(t, last.MinS, 1/last.RateHz, "%+v", last)
	require.GreaterOrEqual(t, last.MaxS, 1/last.RateHz, "%+v", last)
	// Real arrivals jitter; a population's deviation is at most half its range.
	require.Positive(t, last.StdDevS, "%+v", last)
	require.LessOrEqual(t, last.StdDevS, (last.MaxS-last.MinS)/2, "%+v", last)
	require.Greater(t, last.Window, rs[0].Window, "the window fills up: %+v", rs)
	return last
}

// TestTopicRateEmbedded runs topic hz and bw against robotexec run's
// embedded broker: a heartbeat every 10 ms on hb, and two on w/a (10 ms)
// and w/b (20 ms) for a wildcard. The commands run side by side; each
// subtest checks one.
func TestTopicRateEmbedded(t *testing.T) {
	t.Parallel()
	run := startPipeline(t, pipelineOptions{broker: "embedded", inProcess: true, nodes: "" +
		"  - { name: beat, type: heartbeat, params: { topic: hb, period: 10ms } }\n" +
		"  - { name: wa, type: heartbeat, params: { topic: w/a, period: 10ms } }\n" +
		"  - { name: wb, type: heartbeat, params: { topic: w/b, period: 20ms } }\n"})
	hb, w := watchArrivals(t, run.url, "hb"), watchArrivals(t, run.url, "w/+")
	hz := startReports(t, run.url, "hz", 3, "hb")
	bw := startReports(t, run.url, "bw", 3, "hb")
	wild := startReports(t, run.url, "hz", 2, "w/+")
	window := startReports(t, run.url, "hz", 2, "-window", "50", "hb")
	hzText := startRate(t, run.url, "hz", "-n", "1", "hb")
	bwText := startRate(t, run.url, "bw", "-n", "1", "hb")
	silent := map[string]*proc{
		"hz": startRate(t, run.url, "hz", "-timeout", "1s", "silent/topic"),
		"bw": startRate(t, run.url, "bw", "-timeout", "1s", "silent/topic"),
	}

	t.Run("hz", func(t *testing.T) {
		last := requireHz(t, reports[hzLine](t, hz, 3), "hb", hb)
		t.Logf("hz hb: %+v (nominal 100 Hz)", last)
	})
	t.Run("bw", func(t *testing.T) {
		rs := reports[bwLine](t, bw, 3)
		last := rs[len(rs)-1]
		require.Equal(t, "hb", last.Topic)
		// {"node":"beat","seq":N,"time":RFC3339Nano}: 30 bytes and more.
		require.Greater(t, last.MinB, 30, "%+v", last)
		require.LessOrEqual(t, float64(last.MinB), last.MeanB, "%+v", last)
		require.GreaterOrEqual(t, float64(last.MaxB), last.MeanB, "%+v", last)
		require.Greater(t, last.Messages, rs[0].Messages, "the window fills up: %+v", rs)
		// The bytes of every message but the first over the span: the
		// stream's rate times the mean size (58 or 59 B), within hz's 10%.
		rate := last.BytesPerS / last.MeanB
		hb.requireRate(t, rate, last.Messages, last)
		t.Logf("bw hb: %+v (%.1f messages/s)", last, rate)
	})
	t.Run("wildcard", func(t *testing.T) {
		last := requireHz(t, reports[hzLine](t, wild, 2), "w/+", w)
		t.Logf("hz w/+: %+v (nominal 150 Hz)", last)
	})
	t.Run("window", func(t *testing.T) {
		for _, r := range reports[hzLine](t, window, 2) {
			require.Equal(t, 50, r.Window, "%+v", r)
			hb.requireRate(t, r.RateHz, r.Window, r)
		}
	})
	t.Run("text", func(t *testing.T) {
		out, _ := output(t, hzText, 0)
		require.Regexp(t, regexp.MustCompile(`^average rate: \d+\.\d{3}\n\tmin: \d\.\d{3}s max: \d\.\d{3}s std dev: \d\.\d{5}s window: \d+\n$`), out)
		out, _ = output(t, bwText, 0)
		require.Regexp(t, regexp.MustCompile(`^\d+\.\d{2} KB/s from \d+ messages\n\tMessage size mean: \d+(\.\d{1,2})? B min: \d+ B max: \d+ B\n$`), out)
	})
	for verb, p := range silent {
		t.Run("timeout-"+verb, func(t *testing.T) {
			stdout, stderr := output(t, p, 1)
			require.Equal(t, fmt.Sprintf("robotexec topic %s: no message on \"silent/topic\" within 1s\n", verb), stderr)
			require.Empty(t, stdout)
		})
	}
}

// TestTopicRateNoBroker: nothing listens at the broker URL: exit 1 with a
// sentence naming it.
func TestTopicRateNoBroker(t *testing.T) {
	t.Parallel()
	url := brokerURL(freePort(t))
	ps := map[string]*proc{}
	for _, verb := range []string{"hz", "bw"} {
		ps[verb] = startRate(t, url, verb, "-timeout", "1s", "hb")
	}
	for verb, p := range ps {
		stdout, stderr := output(t, p, 1)
		require.True(t, strings.HasPrefix(stderr, "robotexec topic "+verb+": "), "%s", p)
		require.Contains(t, stderr, strings.TrimPrefix(url, "tcp://"), "%s", p)
		require.Equal(t, 1, strings.Count(stderr, "\n"), "one sentence: %s", p)
		require.Empty(t, stdout)
	}
}

// TestTopicRateMosquitto: a paho client publishes 200-byte messages at
// 100 Hz through mosquitto; hz and bw report the rates the stream had
// (arrivals.requireRate): 100 Hz and 20,000 B/s on a quiet machine.
func TestTopicRateMosquitto(t *testing.T) {
	t.Parallel()
	m := mqtttest.Mosquitto(t, mqtttest.MosquittoOptions{})
	c := paho.NewClient(paho.NewClientOptions().AddBroker(m.URL()).SetClientID("rate-" + t.Name()).SetCleanSession(true))
	tok := c.Connect()
	require.True(t, tok.WaitTimeout(traffic) && tok.Error() == nil, "connect: %v", tok.Error())
	defer c.Disconnect(100)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		publishAt(c, "rate/m", strings.Repeat("x", 200), 10*time.Millisecond, stop)
	}()
	defer wg.Wait()
	defer close(stop)

	stream := watchArrivals(t, m.URL(), "rate/m")
	hz := startReports(t, m.URL(), "hz", 3, "rate/m")
	bw := startReports(t, m.URL(), "bw", 3, "rate/m")
	last := requireHz(t, reports[hzLine](t, hz, 3), "rate/m", stream)
	rs := reports[bwLine](t, bw, 3)
	b := rs[len(rs)-1]
	require.Equal(t, bwLine{Topic: "rate/m", BytesPerS: b.BytesPerS, Messages: b.Messages, MeanB: 200, MinB: 200, MaxB: 200}, b)
	stream.requireRate(t, b.BytesPerS/b.MeanB, b.Messages, b)
	t.Logf("mosquitto: hz %+v (nominal 100 Hz); bw %+v (nominal 20000 B/s)", last, b)
}

// publishAt publishes payload on topic every period, on a fixed schedule
// (a late publication is made at once, so that the mean rate holds),
// until stop is closed.
func publishAt(c paho.Client, topic, payload string, period time.Duration, stop <-chan struct{}) {
	next := time.Now()
	for {
		c.Publish(topic, 0, false, payload)
		next = next.Add(period)
		select {
		case <-stop:
			return
		case <-time.After(time.Until(next)):
		}
	}
}
