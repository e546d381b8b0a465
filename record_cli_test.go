package robotexec_test

// End-to-end tests of recording: robotexec record from the embedded
// broker and from mosquitto, read back with robotexec info.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/mqtttest"
)

// info is robotexec info -json's output.
type info struct {
	File      string  `json:"file"`
	Complete  bool    `json:"complete"`
	Messages  int     `json:"messages"`
	DurationS float64 `json:"duration_s"`
	Start     time.Time
	End       time.Time
	Topics    []struct {
		Topic, Encoding string
		Messages        int
		RateHz          float64 `json:"rate_hz"`
		First, Last     time.Time
	}
}

func readInfo(t *testing.T, path string) info {
	t.Helper()
	r := runCmd(t, quickExit, robotexecBin, nil, "info", "-json", path)
	require.Equal(t, 0, r.code, "%s", r)
	var in info
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &in), "%s", r)
	return in
}

// TestRecordInfo: record a stream of JSON and raw messages from the
// embedded broker (of a robotexec run) and from mosquitto; info counts
// exactly what was sent, per topic and encoding, within the time it was
// sent.
func TestRecordInfo(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"embedded", "mosquitto"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			url := ""
			if name == "embedded" {
				url = startPipeline(t, pipelineOptions{broker: "embedded", inProcess: true,
					nodes: "  - { name: beat, type: heartbeat, params: { topic: hb, period: 1h } }\n"}).url
			} else {
				url = mqtttest.Mosquitto(t, mqtttest.MosquittoOptions{}).URL()
			}
			path := filepath.Join(t.TempDir(), "rec.mcap")
			rec := startProc(t, robotexecBin, nil, "record", "-broker", url, "-o", path, "data/#")
			c := paho.NewClient(paho.NewClientOptions().AddBroker(url).SetClientID("rec-pub-" + name))
			tok := c.Connect()
			require.True(t, tok.WaitTimeout(traffic) && tok.Error() == nil)
			defer c.Disconnect(100)
			// The recorder is subscribed once a probe comes through.
			start := time.Now()
			require.Eventually(t, func() bool {
				c.Publish("data/probe", 1, false, "probe").Wait()
				st, err := os.Stat(path)
				return err == nil && st.Size() > 0 && recorded(t, path, "data/probe")
			}, traffic, 200*time.Millisecond)
			const n = 2000
			for i := range n {
				topic, payload := "data/json", fmt.Sprintf(`{"i":%d}`, i)
				if i%4 == 0 {
					topic, payload = "data/raw", fmt.Sprintf("raw\x00%d", i)
				}
				tok := c.Publish(topic, 1, false, payload)
				if i%200 == 199 {
					require.True(t, tok.WaitTimeout(traffic) && tok.Error() == nil)
				}
			}
			c.Publish("data/last", 1, false, "last").Wait()
			require.Eventually(t, func() bool { return recorded(t, path, "data/last") }, traffic, 100*time.Millisecond)
			rec.signal(t, os.Interrupt)
			require.Equal(t, 0, rec.wait(t, quickExit), "%s", rec)
			end := time.Now()
			stderr := strings.Join(rec.stderr.all(), "\n")
			require.Contains(t, stderr, " dropped")
			require.Contains(t, stderr, "recorded to "+path+", 0 dropped")

			in := readInfo(t, path)
			require.True(t, in.Complete)
			counts := map[string]int{}
			for _, tp := range in.Topics {
				counts[tp.Topic+" "+tp.Encoding] = tp.Messages
				require.False(t, tp.First.Before(start.Add(-time.Second)) || tp.Last.After(end), "%s: %v..%v", tp.Topic, tp.First, tp.Last)
			}
			require.Equal(t, n*3/4, counts["data/json json"])
			require.Equal(t, n/4, counts["data/raw application/octet-stream"])
			require.Equal(t, 1, counts["data/last application/octet-stream"])
			require.GreaterOrEqual(t, counts["data/probe application/octet-stream"], 1)
		})
	}
}

// recorded reports whether the recording at path, as written so far,
// holds a message on topic (a chunk is written at least once a second).
func recorded(t *testing.T, path, topic string) bool {
	r := runCmd(t, quickExit, robotexecBin, nil, "info", "-json", path)
	return r.code == 0 && strings.Contains(r.stdout, `"topic":"`+topic+`"`)
}

// TestInfoErrors: a file that is no MCAP file, or none, exits 2.
func TestInfoErrors(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "x.mcap")
	writeFile(t, path, "nodes: []\n")
	for _, args := range [][]string{{"info", path}, {"info", path + ".none"}, {"info"}} {
		r := runCmd(t, quickExit, robotexecBin, nil, args...)
		require.Equal(t, 2, r.code, "%s", r)
		require.NotEmpty(t, r.stderr)
	}
}

// TestRecordKilled: a recorder killed with SIGKILL leaves a file whose
// complete chunks info reads, saying the file is incomplete.
func TestRecordKilled(t *testing.T) {
	t.Parallel()
	url := startPipeline(t, pipelineOptions{broker: "embedded", inProcess: true,
		nodes: "  - { name: beat, type: heartbeat, params: { topic: data/beat, period: 5ms } }\n"}).url
	path := filepath.Join(t.TempDir(), "killed.mcap")
	rec := startProc(t, robotexecBin, nil, "record", "-broker", url, "-o", path, "data/#")
	var before info
	require.Eventually(t, func() bool {
		r := runCmd(t, quickExit, robotexecBin, nil, "info", "-json", path)
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &before) != nil {
			return false
		}
		return before.Messages >= 200
	}, traffic, 100*time.Millisecond)
	require.NoError(t, rec.cmd.Process.Kill())
	rec.wait(t, quickExit)
	after := readInfo(t, path)
	require.False(t, after.Complete)
	require.GreaterOrEqual(t, after.Messages, before.Messages)
	require.Len(t, after.Topics, 1)
	require.Equal(t, "data/beat", after.Topics[0].Topic)
	// The rate is the file's own: its messages over its log times' span.
	// That span is the stream's, so it is near the 5 ms heartbeat's 200 Hz
	// only as far as a loaded machine lets the timer keep its deadlines.
	tp := after.Topics[0]
	require.InEpsilon(t, float64(tp.Messages-1)/tp.Last.Sub(tp.First).Seconds(), tp.RateHz, 1e-6, "%+v", tp)
	require.True(t, tp.RateHz > 100 && tp.RateHz < 220, "a 5 ms heartbeat: %+v", tp)
}
