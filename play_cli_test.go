package robotexec_test

// End-to-end test of playback: robotexec play of a recording into a
// second robotexec record.

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/mqtttest"
	"github.com/robotexec/robotexec/internal/recording"
)

type played struct {
	topic string
	at    time.Time
	data  string
}

func scanAll(t *testing.T, path string) []played {
	t.Helper()
	var out []played
	_, err := recording.Scan(path, func(m recording.Message) error {
		out = append(out, played{m.Topic, m.At, string(m.Data)})
		return nil
	})
	require.NoError(t, err)
	return out
}

// TestPlayRoundTrip: 2 s of two topics at 500 Hz each (1 kHz in all),
// played into the embedded broker and into mosquitto and recorded again: the same messages in the
// same order per topic, each near its original time plus the median
// latency. -topics plays only what its filters match.
//
// It is not parallel: it measures timing, and runs while the package's
// other tests wait.
func TestPlayRoundTrip(t *testing.T) {
	for _, name := range []string{"embedded", "mosquitto"} {
		t.Run(name, func(t *testing.T) {
			var url string
			if name == "embedded" {
				url = startPipeline(t, pipelineOptions{broker: "embedded", inProcess: true,
					nodes: "  - { name: beat, type: heartbeat, params: { topic: hb, period: 1h } }\n"}).url
			} else {
				url = mqtttest.Mosquitto(t, mqtttest.MosquittoOptions{}).URL()
			}
			playRoundTrip(t, url)
		})
	}
}

func playRoundTrip(t *testing.T, url string) {
	dir := t.TempDir()
	orig := filepath.Join(dir, "orig.mcap")
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	r, err := recording.Create(orig, recording.Options{})
	require.NoError(t, err)
	const n = 2000
	for i := range n {
		topic, payload := "play/a", fmt.Sprintf(`{"i":%d}`, i)
		if i%2 == 1 {
			topic, payload = "play/b", fmt.Sprintf("raw %d", i)
		}
		r.Record(topic, []byte(payload), t0.Add(time.Duration(i)*time.Millisecond))
	}
	_, err = r.Close()
	require.NoError(t, err)

	again := filepath.Join(dir, "again.mcap")
	rec := startProc(t, robotexecBin, nil, "record", "-broker", url, "-o", again, "play/#")
	require.Eventually(t, func() bool {
		p := runCmd(t, quickExit, robotexecBin, nil, "pub", "-broker", url, "-qos", "1", "play/probe", "x")
		return p.code == 0 && recorded(t, again, "play/probe")
	}, traffic, 200*time.Millisecond, "the recorder is subscribed")
	p := runCmd(t, 2*quickExit, robotexecBin, nil, "play", "-broker", url, orig)
	require.Equal(t, 0, p.code, "%s", p)
	require.Contains(t, p.stderr, fmt.Sprintf("%d messages published, 0 failed", n))
	nrec := uint64(0)
	arrived := assert.Eventually(t, func() bool {
		s, err := recording.Scan(again, nil)
		if err != nil {
			return false
		}
		nrec = 0
		for _, c := range s.Channels {
			if c.Topic != "play/probe" {
				nrec += c.Messages
			}
		}
		return nrec >= n
	}, traffic, 100*time.Millisecond, "the played messages reach the recorder")
	rec.signal(t, os.Interrupt)
	require.Equal(t, 0, rec.wait(t, quickExit), "%s", rec)
	if !arrived {
		have := map[string]bool{}
		for _, m := range scanAll(t, again) {
			have[m.data] = true
		}
		var missing []string
		for _, m := range scanAll(t, orig) {
			if !have[m.data] {
				missing = append(missing, m.data)
			}
		}
		require.Fail(t, "played messages lost", "%d of %d recorded within %v; missing %q; the recorder: %s", nrec, n, traffic, missing, rec)
	}

	want, got := scanAll(t, orig), scanAll(t, again)
	got = slices.DeleteFunc(got, func(m played) bool { return m.topic == "play/probe" })
	require.Len(t, got, n)
	for _, topic := range []string{"play/a", "play/b"} {
		var w, g []string
		for _, m := range want {
			if m.topic == topic {
				w = append(w, m.data)
			}
		}
		for _, m := range got {
			if m.topic == topic {
				g = append(g, m.data)
			}
		}
		require.Equal(t, w, g, "%s in order", topic)
	}
	// Timing: got is in arrival order; match by payload. Each message's
	// offset is its arrival less its original time; the error is its
	// distance from the median offset (the one-way latency).
	at := map[string]time.Time{}
	for _, m := range got {
		at[m.data] = m.at
	}
	offsets := make([]time.Duration, 0, n)
	for _, m := range want {
		offsets = append(offsets, at[m.data].Sub(m.at))
	}
	sorted := slices.Sorted(slices.Values(offsets))
	median := sorted[len(sorted)/2]
	errs := make([]time.Duration, 0, n)
	for _, o := range offsets {
		errs = append(errs, max(o-median, median-o))
	}
	slices.Sort(errs)
	p99 := errs[len(errs)*99/100]
	t.Logf("timing error from the median latency: p50 %v, p99 %v, max %v; the first message's %v",
		errs[len(errs)/2], p99, errs[len(errs)-1], offsets[0]-median)
	// On an idle machine p99 is under 1 ms (BENCHMARKS.md); beside the
	// rest of the suite on two cores it reaches a few ms, and on an
	// overloaded machine a stall of 100 ms was seen. 250 ms still fails
	// playback that ignores or misscales the timing (2 s of it).
	require.LessOrEqual(t, p99, 250*time.Millisecond)

	// -topics: only play/b.
	only := filepath.Join(dir, "only.mcap")
	rec = startProc(t, robotexecBin, nil, "record", "-broker", url, "-o", only, "play/#")
	require.Eventually(t, func() bool {
		p := runCmd(t, quickExit, robotexecBin, nil, "pub", "-broker", url, "-qos", "1", "play/probe", "x")
		return p.code == 0 && recorded(t, only, "play/probe")
	}, traffic, 200*time.Millisecond)
	p = runCmd(t, 2*quickExit, robotexecBin, nil, "play", "-broker", url, "-rate", "4", "-topics", "play/b,nothing/#", orig)
	require.Equal(t, 0, p.code, "%s", p)
	require.Contains(t, p.stderr, fmt.Sprintf("%d messages published", n/2))
	rec.signal(t, os.Interrupt)
	require.Equal(t, 0, rec.wait(t, quickExit))
	for _, m := range scanAll(t, only) {
		require.Contains(t, []string{"play/b", "play/probe"}, m.topic)
	}
}
