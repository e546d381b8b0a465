package robotexec_test

// End-to-end tests of recording onto a file that cannot grow: robotexec
// record and run -record run under a file size limit (RLIMIT_FSIZE, set
// with bash's ulimit), so that the kernel fails their writes with EFBIG,
// as a full disk fails them with ENOSPC. The limit needs no privilege,
// so the tests run the same here and in CI.

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/mcapjs"
)

// fullLimitKiB is the recordings' size limit: more than a chunk (1 MiB),
// so that the file holds at least one before the writes fail.
const fullLimitKiB = 2048

// limited returns the command that runs robotexec args with the files it
// writes limited to fullLimitKiB.
func limited(t *testing.T, args ...string) (string, []string) {
	t.Helper()
	bash, err := exec.LookPath("bash")
	require.NoError(t, err, "the file size limit is set with bash's ulimit")
	return bash, append([]string{"-c", fmt.Sprintf(`ulimit -f %d && exec "$0" "$@"`, fullLimitKiB), robotexecBin}, args...)
}

// flood publishes 2 KiB payloads that zstd cannot shrink to topic, at QoS
// 1, until stop returns true; it fails the test if that takes longer than
// traffic.
func flood(t *testing.T, c paho.Client, topic string, stop func() bool) {
	t.Helper()
	rng := rand.New(rand.NewPCG(26, 5))
	deadline := time.Now().Add(traffic)
	for !stop() {
		require.True(t, time.Now().Before(deadline), "the recording did not stop within %v", traffic)
		var tok paho.Token
		for range 100 {
			payload := make([]byte, 2048)
			for i := range payload {
				payload[i] = byte(rng.Uint32())
			}
			tok = c.Publish(topic, 1, false, payload)
		}
		require.True(t, tok.WaitTimeout(traffic) && tok.Error() == nil, "publish: %v", tok.Error())
	}
}

func connectClient(t *testing.T, url, id string) paho.Client {
	t.Helper()
	c := paho.NewClient(paho.NewClientOptions().AddBroker(url).SetClientID(id))
	tok := c.Connect()
	require.True(t, tok.WaitTimeout(traffic) && tok.Error() == nil, "connect: %v", tok.Error())
	t.Cleanup(func() { c.Disconnect(100) })
	return c
}

// TestRecordFileTooLarge: robotexec record onto a file that reaches its
// size limit says so at once, naming the file and the cause, and ends
// (exit 1) by itself; the count it prints is what info and the
// independent reader find in the file.
func TestRecordFileTooLarge(t *testing.T) {
	t.Parallel()
	url := startPipeline(t, pipelineOptions{broker: "embedded", inProcess: true,
		nodes: "  - { name: beat, type: heartbeat, params: { topic: hb, period: 1h } }\n"}).url
	path := filepath.Join(t.TempDir(), "full.mcap")
	bin, args := limited(t, "record", "-broker", url, "-o", path, "data/#")
	rec := startProc(t, bin, nil, args...)
	flood(t, connectClient(t, url, "full-pub"), "data/raw", rec.hasExited)
	require.Equal(t, 1, rec.wait(t, quickExit), "%s", rec)

	ls := rec.stderr.all()
	cause := "robotexec record: recording: " + path + ": write: file too large"
	requireOrdered(t, ls, cause, " messages recorded to "+path+", ")
	requireOnce(t, ls, "file too large")
	m := regexp.MustCompile(`^robotexec record: (\d+) messages recorded to `).FindStringSubmatch(ls[len(ls)-1])
	require.NotNil(t, m, "the count is the last line:\n%s", strings.Join(ls, "\n"))
	n, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	require.Positive(t, n, "the file holds its first chunk")
	requireHolds(t, path, n)
}

// TestRunRecordFileTooLarge: robotexec run -record onto a file that
// reaches its size limit logs it at once, naming the file and the cause;
// the nodes go on, only the recording stops. At the stop the run logs
// the count the file holds, which info and the independent reader find,
// and exits 1: the recording asked for is incomplete.
func TestRunRecordFileTooLarge(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	url := brokerURL(port)
	config := filepath.Join(t.TempDir(), "config.yaml")
	writeFile(t, config, fmt.Sprintf(`executor: { workers: 2 }
mqtt: { listen: 127.0.0.1:%d, client_id: run-record-full, qos: 1 }
nodes:
  - { name: relay, type: bridge, params: { from: in/+, to: out/+ } }
`, port))
	path := filepath.Join(t.TempDir(), "run.mcap")
	bin, args := limited(t, "run", "-record", path, config)
	run := startProc(t, bin, nil, args...)
	run.stderr.waitFor(t, startup, "robotexec running")

	c := connectClient(t, url, "run-full-pub")
	after := make(chan struct{}, 1)
	tok := c.Subscribe("out/after", 1, func(paho.Client, paho.Message) {
		select {
		case after <- struct{}{}:
		default:
		}
	})
	require.True(t, tok.WaitTimeout(traffic) && tok.Error() == nil, "subscribe: %v", tok.Error())
	stopped := func() bool {
		_, ok := run.stderr.find(func(s string) bool { return strings.Contains(s, `msg="recording stopped`) })
		return ok
	}
	flood(t, c, "in/raw", stopped)
	line, _ := run.stderr.find(func(s string) bool { return strings.Contains(s, `msg="recording stopped`) })
	require.Contains(t, line, "level=ERROR")
	require.Contains(t, line, "file="+path)
	require.Contains(t, line, `error="recording: `+path+`: write: file too large"`)

	// The relay still relays.
	deadline := time.After(traffic)
	for got := false; !got; {
		c.Publish("in/after", 1, false, "after").Wait()
		select {
		case <-after:
			got = true
		case <-time.After(100 * time.Millisecond):
		case <-deadline:
			t.Fatalf("the relay stopped with the recording:\n%s", run)
		}
	}
	require.False(t, run.hasExited(), "%s", run)

	run.signal(t, os.Interrupt)
	require.Equal(t, 1, run.wait(t, stopWithin), "%s", run)
	ls := run.stderr.all()
	requireOnce(t, ls, "file too large")
	requireOnce(t, ls, `msg="recording stopped`)
	requireOrdered(t, ls, `msg="recording stopped`, `msg="recording written" file=`+path,
		"robotexec run: -record: "+path+": the recording stopped early, at a write error")
	written, _ := run.stderr.find(func(s string) bool { return strings.Contains(s, `msg="recording written"`) })
	m := regexp.MustCompile(` messages=(\d+) `).FindStringSubmatch(written)
	require.NotNil(t, m, written)
	n, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	require.Positive(t, n, "the file holds its first chunk")
	requireHolds(t, path, n)
}

// requireOnce checks that exactly one line of ls holds substr.
func requireOnce(t *testing.T, ls []string, substr string) {
	t.Helper()
	n := 0
	for _, l := range ls {
		if strings.Contains(l, substr) {
			n++
		}
	}
	require.Equal(t, 1, n, "lines with %q; the lines:\n%s", substr, strings.Join(ls, "\n"))
}

// requireHolds checks that robotexec info and the independent reader
// find n messages in the file at path: read from start to end and, when
// the file was closed with its summary (there was room for it), through
// its summary and indexes too.
func requireHolds(t *testing.T, path string, n int) {
	t.Helper()
	in := readInfo(t, path)
	require.Equal(t, n, in.Messages, "robotexec info")
	node := mcapjsNode(t)
	stream := readMcapJS(t, node, "stream.mjs", path)
	require.Equal(t, n, stream.MessageCount, "@mcap/core's stream reader")
	require.Equal(t, in.Complete, stream.Complete, "info and the stream reader: is the footer there?")
	if in.Complete {
		require.Equal(t, n, readMcapJS(t, node, "read.mjs", path).MessageCount, "@mcap/core's indexed reader")
	} else {
		t.Logf("%s: no room was left for the summary", path)
	}
}

// mcapjsDir is the directory of the independent MCAP reader, @mcap/core
// under Node (.ci/run installs it).
const mcapjsDir = "internal/recording/testdata/mcapjs"

// mcapjsNode returns the node binary that runs the reader, installed.
func mcapjsNode(t *testing.T) string { return mcapjs.Node(t, mcapjsDir) }

// mcapJSRead is what the reader's scripts print, in part.
type mcapJSRead struct {
	MessageCount int  `json:"messageCount"`
	Complete     bool `json:"complete"`
}

func readMcapJS(t *testing.T, node, script, path string) mcapJSRead {
	t.Helper()
	var r mcapJSRead
	mcapjs.Read(t, node, mcapjsDir, script, path, &r)
	return r
}
