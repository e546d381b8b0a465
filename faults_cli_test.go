package robotexec_test

// End-to-end tests of publications a broker refuses: robotexec run against
// mosquitto with a small max_packet_size, and robotexec pub.

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/mqtttest"
)

// TestRefusedPublicationCLI: a bridge republishes a message on a longer
// topic, which makes it larger than mosquitto takes (max_packet_size,
// which mosquitto states in CONNACK as its MQTT 5 Maximum Packet Size).
// robotexec refuses that publication at Publish, never sends it, logs the
// reason with the topic and counts it; the connection stays, and a 100 Hz
// QoS 1 heartbeat of the same process loses nothing. robotexec pub exits
// 1 naming the reason.
func TestRefusedPublicationCLI(t *testing.T) {
	t.Parallel()
	url := mqtttest.Mosquitto(t, mqtttest.MosquittoOptions{Extra: []string{"max_packet_size 4096"}}).URL()
	longer := strings.Repeat("longer/", 20)
	r := startPipeline(t, pipelineOptions{broker: url, inProcess: true, nodes: fmt.Sprintf(
		"  - { name: beat, type: heartbeat, params: { topic: robot/heartbeat, period: 10ms } }\n"+
			"  - { name: relay, type: bridge, params: { from: 'in/#', to: '%s#' } }\n", longer)})
	watch := startProc(t, robotexecBin, nil, "echo", "-broker", url, "-qos", "1", "robot/heartbeat")
	watch.stdout.waitFor(t, traffic, "robot/heartbeat ")

	// 4,000 bytes fit the broker's limit on the way in, not on the way out.
	payload := strings.Repeat("x", 4000)
	p := runCmd(t, quickExit, robotexecBin, nil, "pub", "-broker", url, "in/x", payload)
	require.Equal(t, 0, p.code, "%s", p)
	refused := r.stderr.waitFor(t, traffic, "the broker refused to publish")
	require.Contains(t, refused, "topic="+longer+"x")
	require.Contains(t, refused, `reason="packet too large"`)
	refusedAt := time.Now()
	time.Sleep(2 * time.Second) // the stream goes on
	require.Zero(t, r.metric(t, "robotexec_mqtt_reconnects_total"))
	require.Equal(t, 1.0, r.metric(t, `robotexec_mqtt_refused_total{reason="packet_too_large"}`))
	require.GreaterOrEqual(t, r.metric(t, "robotexec_mqtt_publish_failures_total"), 1.0)

	watch.signal(t, os.Interrupt)
	require.Equal(t, 0, watch.wait(t, quickExit))
	lines := watch.stdout.all()
	first, lastBeat := parseBeat(t, lines[0]).Seq, parseBeat(t, lines[len(lines)-1])
	last := lastBeat.Seq
	seen := map[uint64]bool{}
	for _, l := range lines {
		seen[parseBeat(t, l).Seq] = true
	}
	// The stream went on after the refusal. The count of beats depends on
	// the machine's load (a late period is skipped, not made up), so the
	// check is the last beat's own time, stamped by the process, more
	// than a second after the refusal, with no sequence number missing.
	require.True(t, lastBeat.Time.After(refusedAt.Add(time.Second)),
		"last beat at %s, refused at %s", lastBeat.Time, refusedAt)
	for s := first; s <= last; s++ {
		require.True(t, seen[s], "heartbeat %d lost (of %d..%d)", s, first, last)
	}

	// pub: refused at Publish, with the reason.
	p = runCmd(t, quickExit, robotexecBin, nil, "pub", "-broker", url, "-timeout", "5s", "in/"+longer, payload)
	require.Equal(t, 1, p.code, "%s", p)
	require.Contains(t, p.stderr, "packet too large", "%s", p)
}

// TestMaxPayloadCLI: mqtt.max_payload drops and counts a larger message
// received, before any node sees it; a smaller one goes through.
func TestMaxPayloadCLI(t *testing.T) {
	t.Parallel()
	r := startPipeline(t, pipelineOptions{broker: "embedded", inProcess: true, mqtt: ", max_payload: 1KiB",
		nodes: "  - { name: relay, type: bridge, params: { from: 'in/#', to: 'out/#' } }\n"})
	watch := startProc(t, robotexecBin, nil, "echo", "-broker", r.url, "-qos", "1", "out/#")
	publishUntil(t, r.url, func() bool {
		_, ok := watch.stdout.find(func(l string) bool { return strings.HasPrefix(l, "out/small ") })
		return ok
	}, pubMsg{"in/big", strings.Repeat("b", 1025)}, pubMsg{"in/small", strings.Repeat("s", 1024)})
	_, big := watch.stdout.find(func(l string) bool { return strings.HasPrefix(l, "out/big ") })
	require.False(t, big, "a payload over max_payload went through")
	_, body := getURL(t, r.metrics)
	require.Regexp(t, `robotexec_messages_dropped_total\{[^}]*node="relay"[^}]*reason="too_large"[^}]*\} [1-9]`, body)
}
