package robotexec_test

import (
	"os"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/mqtt/broker"
	"github.com/robotexec/robotexec/internal/mqtttest"
)

// TestRunLinger: with mqtt.linger, a publication bound for the broker
// waits the linger before it goes, while the node of the same process
// that subscribes to its topic gets it at once; one lingering when
// robotexec stops goes before it exits.
func TestRunLinger(t *testing.T) {
	t.Parallel()
	const linger = time.Second
	b := externalBroker(t, "embedded", broker.Config{}, mqtttest.MosquittoOptions{})
	got := subscribeBroker(t, b.URL(), "linger/out/a")
	r := startPipeline(t, pipelineOptions{broker: b.URL(), inProcess: true, mqtt: ", linger: 1s",
		nodes: "  - { name: a, type: bridge, params: { from: linger/in, to: linger/out/a } }\n" +
			"  - { name: b, type: bridge, params: { from: linger/out/a, to: linger/out/b } }\n"})
	arrived := func() bool {
		select {
		case <-got:
			return true
		default:
			return false
		}
	}
	publishUntil(t, r.url, arrived, pubMsg{"linger/in", "warm"})
	// The warm-up's later copies come within a linger of their
	// publication: then nothing lingers.
	for quiet := time.After(2 * linger); ; {
		select {
		case <-got:
			continue
		case <-quiet:
		}
		break
	}

	runs := callbackRuns(r.metrics, "b")
	pub := paho.NewClient(paho.NewClientOptions().AddBroker(r.url).SetClientID("pub-" + t.Name()))
	tok := pub.Connect()
	require.True(t, tok.WaitTimeout(traffic) && tok.Error() == nil, "connect: %v", tok.Error())
	defer pub.Disconnect(100)
	start := time.Now()
	tok = pub.Publish("linger/in", 1, false, "timed")
	require.True(t, tok.WaitTimeout(traffic) && tok.Error() == nil, "publish: %v", tok.Error())
	require.Eventually(t, func() bool { return callbackRuns(r.metrics, "b") > runs }, traffic, 5*time.Millisecond,
		"node b gets a's publication in the process")
	local := time.Since(start)
	select {
	case p := <-got:
		require.Equal(t, "timed", p)
	case <-time.After(traffic):
		t.Fatal("the publication never reached the broker")
	}
	remote := time.Since(start)
	t.Logf("in the process after %v, at the broker's subscriber after %v", local, remote)
	require.GreaterOrEqual(t, remote, linger, "the broker got it before the linger ended")
	require.Less(t, local, linger, "the node in the process waited for the linger")

	// A publication lingering when robotexec stops still goes.
	runs = callbackRuns(r.metrics, "b")
	tok = pub.Publish("linger/in", 1, false, "last")
	require.True(t, tok.WaitTimeout(traffic) && tok.Error() == nil, "publish: %v", tok.Error())
	require.Eventually(t, func() bool { return callbackRuns(r.metrics, "b") > runs }, traffic, 5*time.Millisecond)
	r.signal(t, os.Interrupt)
	require.Equal(t, 0, r.wait(t, stopWithin))
	select {
	case p := <-got:
		require.Equal(t, "last", p)
	case <-time.After(traffic):
		t.Fatal("the publication lingering at the stop was lost")
	}
}
