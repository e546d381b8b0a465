package mqtt_test

import (
	"context"
	"slices"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/internal/mqtttest"
	"github.com/robotexec/robotexec/subscribers"
)

// TestRetainedOnce: a retained message on r/t, and subscriptions r/#,
// r/t, r/t and r/+ of one client, one more r/t attached while the client
// runs, and one after a reconnection: each gets the retained message
// once, then each live message once (MQTT 5: the copies the broker sends
// for each SUBSCRIBE carry its identifier). With MQTT 3.1.1 each gets the
// retained message once too.
func TestRetainedOnce(t *testing.T) {
	forEachBroker(t, mqtttest.MosquittoOptions{}, func(t *testing.T, b mqtttest.Broker) {
		for _, protocol := range []string{mqtt.Protocol5, mqtt.Protocol311} {
			t.Run(protocol, func(t *testing.T) {
				retainedOnce(t, b, protocol)
			})
		}
	})
}

func retainedOnce(t *testing.T, b mqtttest.Broker, protocol string) {
	topic := "r-" + clientID(t, "t") + "/t"
	root := topic[:len(topic)-2]
	other := rawClient(t, b.URL())
	publishRouted(t, other, topic, "kept")
	t.Cleanup(func() { publish(t, other, topic, 1, true, "") })

	proxy := mqtttest.NewProxy(t, b.Addr())
	c := dial(t, proxy.URL(), mqtt.Config{QoS: 1, Protocol: protocol, InProcess: true, StatusTopic: "-"})
	ex := executor.New(executor.Options{Workers: 2})
	recs := map[string]*recorder{}
	attach := func(name, filter string) {
		rec := newRecorder()
		recs[name] = rec
		_, err := ex.NewOwner(name, nil).Subscribe(c, filter, rec.add, executor.Depth(100))
		require.NoError(t, err)
	}
	for name, f := range map[string]string{"hash": root + "/#", "t1": topic, "t2": topic, "plus": root + "/+"} {
		attach(name, f)
	}
	startExecutor(t, ex)
	for _, rec := range recs {
		rec.waitCount(t, 1)
	}
	attach("late", topic)
	recs["late"].waitCount(t, 1)

	proxy.Cut()
	eventually(t, "a reconnection", func() bool { return c.Stats().Reconnects == 1 && c.Connected() })
	attach("after", topic)
	recs["after"].waitCount(t, 1)

	// A live message after them all, then a marker: what came before it
	// is all there is.
	publish(t, other, topic, 1, false, "live")
	for _, rec := range recs {
		rec.waitUntil(t, "the live message", func(ms []subscribers.Message) bool {
			return slices.ContainsFunc(ms, func(m subscribers.Message) bool { return string(m.Payload) == "live" })
		})
	}
	time.Sleep(200 * time.Millisecond)
	for name, rec := range recs {
		var got []string
		for _, m := range rec.snapshot() {
			p := string(m.Payload)
			if m.Retained {
				p += " (retained)"
			}
			got = append(got, p)
		}
		if protocol == mqtt.Protocol311 && name != "after" {
			// Without identifiers a live message reaches each
			// subscription as often as the broker sends it.
			require.Equal(t, "kept (retained)", got[0], "%s: %v", name, got)
			require.Equal(t, 1, count(got, "kept (retained)"), "%s: %v", name, got)
			continue
		}
		require.Equal(t, []string{"kept (retained)", "live"}, got, name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	require.NoError(t, c.WaitConnected(ctx))
}

// publishRouted publishes payload retained on topic and waits until the
// broker has routed it to its subscribers, not only acknowledged it: the
// embedded broker acknowledges a QoS 1 publication before it picks the
// subscriptions that get it live, so a client subscribing in between gets
// both the retained copy and a live one, as MQTT allows.
func publishRouted(t *testing.T, c paho.Client, topic, payload string) {
	t.Helper()
	routed := make(chan struct{}, 1)
	tok := c.Subscribe(topic, 1, func(_ paho.Client, m paho.Message) {
		if !m.Retained() && string(m.Payload()) == payload {
			select {
			case routed <- struct{}{}:
			default:
			}
		}
	})
	require.True(t, tok.WaitTimeout(waitFor) && tok.Error() == nil, "subscribe: %v", tok.Error())
	publish(t, c, topic, 1, true, payload)
	select {
	case <-routed:
	case <-time.After(waitFor):
		t.Fatalf("%s: the publication never came back", topic)
	}
	tok = c.Unsubscribe(topic)
	require.True(t, tok.WaitTimeout(waitFor) && tok.Error() == nil, "unsubscribe: %v", tok.Error())
}

func count(xs []string, x string) int {
	n := 0
	for _, y := range xs {
		if y == x {
			n++
		}
	}
	return n
}
