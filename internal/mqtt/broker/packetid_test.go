package broker_test

import (
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	mochi "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/hooks/auth"
	"github.com/mochi-mqtt/server/v2/listeners"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/mqtt/broker"
)

// A client subscribes to a second filter while it has not acknowledged
// the retained QoS 1 messages of its first: paho numbers its SUBSCRIBE
// packets from 1, as the broker numbers its messages, so the second
// SUBSCRIBE has the identifier of an unacknowledged message. Plain mochi
// (v2.7.9) takes the two for the same and answers 0x91, "packet
// identifier in use" (not even an MQTT 3.1.1 return code), without
// subscribing nor sending the retained messages of the second filter; the
// same for an UNSUBSCRIBE, which leaves the subscription in place (the
// UNSUBACK of MQTT 3.1.1 has no return code).
// The embedded broker subscribes and unsubscribes as asked (see
// packetIDHook). The client here acknowledges nothing until the end,
// which makes the clash certain; robotexec's commands, which acknowledge
// as their callbacks take the messages, met it about one run in three
// (TestRetainedOfTwoFilters of package mqtt).
func TestSubscribePacketIDOfUnackedMessage(t *testing.T) {
	t.Run("mochi", func(t *testing.T) {
		// If this fails after upgrading mochi, mochi fixed it, and
		// packetIDHook may go.
		got := packetIDClash(t, plainMochi(t))
		require.Equal(t, byte(0x91), got.subCode, "SUBACK return code")
		require.Empty(t, got.statuses, "retained messages of the second filter")
		require.True(t, got.afterUnsub, "a message of the filter unsubscribed")
	})
	t.Run("embedded", func(t *testing.T) {
		b, err := broker.New(broker.Config{Listen: "127.0.0.1:0", Logger: quiet})
		require.NoError(t, err)
		t.Cleanup(func() { _ = b.Close() })
		got := packetIDClash(t, b.URL())
		require.Equal(t, byte(1), got.subCode, "SUBACK return code")
		require.ElementsMatch(t, []string{"robotexec/a/status", "robotexec/b/status", "robotexec/c/status"}, got.statuses,
			"retained messages of the second filter")
		require.False(t, got.afterUnsub, "a message of the filter unsubscribed")
	})
}

// plainMochi starts a mochi broker without robotexec's hooks and returns
// its URL.
func plainMochi(t *testing.T) string {
	srv := mochi.New(&mochi.Options{Logger: quiet, InlineClient: false})
	require.NoError(t, srv.AddHook(new(auth.AllowHook), nil))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	require.NoError(t, srv.AddListener(listeners.NewNet("plain", ln)))
	require.NoError(t, srv.Serve())
	t.Cleanup(func() { _ = srv.Close() })
	return "tcp://" + ln.Addr().String()
}

type clash struct {
	subCode    byte     // the SUBACK's return code for the second filter
	statuses   []string // the retained messages of the second filter
	afterUnsub bool     // a message of the second filter came after unsubscribing it
}

// packetIDClash makes a client's SUBSCRIBE, then its UNSUBSCRIBE, carry
// the identifier of a message the broker at url sent it and it has not
// acknowledged, and reports what came of them.
// The identifiers: the client's are SUBSCRIBE news 1, SUBSCRIBE graphs 2,
// SUBSCRIBE statuses 3, SUBSCRIBE marker 4, UNSUBSCRIBE news 5; the
// broker's, the three retained graphs 1 to 3, the retained marker 4, a
// graph published then 5.
func packetIDClash(t *testing.T, url string) clash {
	const wait = 10 * time.Second
	done := func(tok paho.Token) {
		t.Helper()
		require.True(t, tok.WaitTimeout(wait), "no answer from the broker")
		require.NoError(t, tok.Error())
	}
	pub := paho.NewClient(paho.NewClientOptions().AddBroker(url).SetClientID("pub").SetProtocolVersion(4))
	done(pub.Connect())
	t.Cleanup(func() { pub.Disconnect(0) })
	for _, id := range []string{"a", "b", "c"} {
		done(pub.Publish("robotexec/"+id+"/graph", 1, true, "graph of "+id))
		done(pub.Publish("robotexec/"+id+"/status", 0, true, "online"))
	}
	done(pub.Publish("marker", 1, true, "-"))
	// The QoS 0 publications completed once written: a QoS 1 one after
	// them completes once the broker has them all.
	done(pub.Publish("sync", 1, false, "-"))

	var mu sync.Mutex
	var unacked []paho.Message
	var graphs, statuses, news, markers []string
	arrived := make(chan struct{}, 100)
	cli := paho.NewClient(paho.NewClientOptions().AddBroker(url).SetClientID("cli").SetProtocolVersion(4).
		SetCleanSession(true).SetOrderMatters(true).SetAutoAckDisabled(true).
		SetDefaultPublishHandler(func(_ paho.Client, m paho.Message) {
			mu.Lock()
			defer mu.Unlock()
			unacked = append(unacked, m)
			switch m.Topic() {
			case "robotexec/a/graph", "robotexec/b/graph", "robotexec/c/graph":
				graphs = append(graphs, m.Topic())
			case "news":
				news = append(news, m.Topic())
			case "marker":
				markers = append(markers, m.Topic())
			default:
				statuses = append(statuses, m.Topic())
			}
			arrived <- struct{}{}
		}))
	done(cli.Connect())
	t.Cleanup(func() {
		mu.Lock()
		for _, m := range unacked {
			m.Ack()
		}
		mu.Unlock()
		cli.Disconnect(0)
	})
	count := func(list *[]string, n int) {
		t.Helper()
		deadline := time.After(wait)
		for {
			mu.Lock()
			have := len(*list)
			mu.Unlock()
			if have >= n {
				return
			}
			select {
			case <-arrived:
			case <-deadline:
				t.Fatalf("timed out waiting for %d messages, have %d", n, have)
			}
		}
	}

	// SUBSCRIBE 1 and 2; the broker sends the graphs as 1, 2 and 3,
	// which stay unacknowledged.
	done(cli.Subscribe("news", 1, nil))
	done(cli.Subscribe("robotexec/+/graph", 1, nil))
	count(&graphs, 3)
	// SUBSCRIBE 3.
	tok := cli.Subscribe("robotexec/+/status", 1, nil)
	done(tok)
	var out clash
	out.subCode = tok.(*paho.SubscribeToken).Result()["robotexec/+/status"]
	// SUBSCRIBE 4. The broker queues the retained messages of a
	// subscription after its SUBACK, as it handles it: the retained
	// marker, 4, comes after the statuses, if any.
	done(cli.Subscribe("marker", 1, nil))
	count(&markers, 1)
	mu.Lock()
	out.statuses = append([]string(nil), statuses...)
	mu.Unlock()
	// A graph, 5, unacknowledged too.
	done(pub.Publish("robotexec/a/graph", 1, true, "graph of a, again"))
	count(&graphs, 4)

	// UNSUBSCRIBE 5; then news, which comes before the graph published
	// after it if it comes at all.
	done(cli.Unsubscribe("news"))
	done(pub.Publish("news", 1, false, "after unsubscribing"))
	done(pub.Publish("robotexec/b/graph", 1, false, "graph of b, again"))
	count(&graphs, 5)
	mu.Lock()
	out.afterUnsub = len(news) > 0
	mu.Unlock()
	t.Log(fmt.Sprintf("%+v", out))
	return out
}
