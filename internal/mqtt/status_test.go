package mqtt_test

import (
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/internal/mqtt/broker"
	"github.com/robotexec/robotexec/internal/mqtttest"
)

// watch subscribes a plain client to topic and returns the payloads it
// receives.
func watch(t *testing.T, url, topic string) <-chan string {
	ch := make(chan string, 100)
	obs := rawClient(t, url)
	tok := obs.Subscribe(topic, 1, func(_ paho.Client, m paho.Message) { ch <- string(m.Payload()) })
	require.True(t, tok.WaitTimeout(waitFor))
	require.NoError(t, tok.Error())
	return ch
}

// expectSeq waits for the values of seq in that order, skipping others.
func expectSeq(t *testing.T, ch <-chan string, seq ...string) {
	t.Helper()
	timeout := time.After(waitFor)
	for _, want := range seq {
		for got := ""; got != want; {
			select {
			case got = <-ch:
			case <-timeout:
				t.Fatalf("no %q within %v (sequence %q)", want, waitFor, seq)
			}
		}
	}
}

// The status topic reads online after connecting, offline (the last will)
// when the connection breaks without a DISCONNECT, online again after
// reconnecting, and offline after Close; it is retained.
func TestStatusTopic(t *testing.T) {
	forEachBroker(t, mqtttest.MosquittoOptions{}, func(t *testing.T, b mqtttest.Broker) {
		p := mqtttest.NewProxy(t, b.Addr())
		id := clientID(t, "robot")
		topic := "robotexec/" + id + "/status"
		status := watch(t, b.URL(), topic)

		c := dial(t, p.URL(), mqtt.Config{ClientID: id, MaxBackoff: 200 * time.Millisecond})
		require.Equal(t, topic, c.StatusTopic())
		expectSeq(t, status, "online")

		// The process "dies" and stays away until the broker noticed.
		// (A repeated "online" is harmless and skipped.)
		p.Refuse(true)
		require.Positive(t, p.Cut())
		expectSeq(t, status, "offline")
		p.Refuse(false)
		expectSeq(t, status, "online")
		eventually(t, "reconnected", func() bool { return c.Connected() && c.Stats().Reconnects == 1 })

		// A break the client notices first: it reconnects before the
		// broker noticed. mosquitto then drops the old connection's will;
		// mochi publishes it, after the new "online", and the client,
		// seeing its status read offline, says online again.
		require.Positive(t, p.Cut())
		eventually(t, "reconnected", func() bool { return c.Connected() && c.Stats().Reconnects == 2 })
		eventually(t, "retained status online", func() bool { return retained(t, b.URL(), topic) == "online" })

		for len(status) > 0 {
			<-status // what the breaks left
		}
		require.NoError(t, c.Close())
		require.NoError(t, c.Close()) // idempotent
		expectSeq(t, status, "offline")
		require.False(t, c.Connected())
		require.Equal(t, "offline", retained(t, b.URL(), topic))
	})
}

// retained returns the retained message of topic.
func retained(t *testing.T, url, topic string) string {
	ch := make(chan string, 1)
	obs := rawClient(t, url)
	defer obs.Disconnect(0)
	tok := obs.Subscribe(topic, 1, func(_ paho.Client, m paho.Message) {
		select {
		case ch <- string(m.Payload()):
		default:
		}
	})
	require.True(t, tok.WaitTimeout(waitFor))
	require.NoError(t, tok.Error())
	select {
	case s := <-ch:
		return s
	case <-time.After(waitFor):
		t.Fatalf("no retained message on %s", topic)
		return ""
	}
}

// A custom status topic, and none.
func TestStatusTopicConfig(t *testing.T) {
	forEachBroker(t, mqtttest.MosquittoOptions{}, func(t *testing.T, b mqtttest.Broker) {
		status := watch(t, b.URL(), "fleet/r1/state")
		dial(t, b.URL(), mqtt.Config{StatusTopic: "fleet/r1/state"})
		expectSeq(t, status, "online")

		c := dial(t, b.URL(), mqtt.Config{StatusTopic: "-"})
		require.Empty(t, c.StatusTopic())
	})
}

// A client that reconnects while the embedded broker still holds its old
// connection stays online: no will of the replaced connection says
// offline after the new connection said online (the broker voids such a
// will). The link dies one way (the proxy drops what the broker sends and
// keeps the broker's side open): the client gives the connection up after
// its keep-alive and reconnects while the broker still holds the old one,
// which its pings kept alive.
func TestTakeoverLeavesStatusOnline(t *testing.T) {
	b := mqtttest.Embedded(t, broker.Config{})
	p := mqtttest.NewProxy(t, b.Addr())
	id := clientID(t, "robot")
	topic := "robotexec/" + id + "/status"
	status := watch(t, b.URL(), topic)
	c := dial(t, p.URL(), mqtt.Config{ClientID: id, KeepAlive: 2 * time.Second, PingTimeout: time.Second, MaxBackoff: 200 * time.Millisecond})
	expectSeq(t, status, "online")

	before := c.Stats().Connects
	p.Mute()
	eventually(t, "the client's reconnection", func() bool { return c.Stats().Connects > before && c.Connected() })
	expectSeq(t, status, "online")
	// A fence from another client: the watcher gets it after anything
	// published before, the old connection's will included if the broker
	// sent it when it let the old connection go.
	eventually(t, "the old connection's end at the broker", func() bool { return p.Open() <= 1 })
	fence := rawClient(t, b.URL())
	publish(t, fence, topic, 1, false, "fence")
	for got := ""; got != "fence"; {
		select {
		case got = <-status:
			require.NotEqual(t, "offline", got, "the replaced connection's will")
		case <-time.After(waitFor):
			t.Fatal("no fence")
		}
	}
}
