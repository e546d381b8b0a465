package mqtt_test

import (
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/mqtttest"
	"github.com/robotexec/robotexec/subscribers/mqtt"
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
