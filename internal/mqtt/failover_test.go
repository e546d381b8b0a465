package mqtt_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"
	paho3 "github.com/eclipse/paho.mqtt.golang"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/internal/mqtt/broker"
	"github.com/robotexec/robotexec/internal/mqtttest"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/waitset"
)

// failoverWithin bounds the time from a lost connection to the
// connection to the next broker of the list: the first attempt is at
// once, and a loaded machine may take a while to make it.
const failoverWithin = 2 * time.Second

// With a list of brokers (a primary and its standby, which share
// nothing), the client connects to the first; when that one stops, it is
// connected to the next within failoverWithin, says so in its log, its
// status (the broker property) and its Stats, counts the session the
// standby does not have, subscribes again there, and sends the QoS 1
// publications made in between.
func TestBrokersFailover(t *testing.T) {
	logs := newLogSink(t)
	primary := mqtttest.Embedded(t, broker.Config{})
	standby := mqtttest.Embedded(t, broker.Config{})
	c, err := mqtt.Dial(mqtt.Config{Brokers: []string{primary.URL(), standby.URL()}, ClientID: clientID(t, "robot"),
		QoS: 1, MaxBackoff: time.Second, Logger: logs.logger()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	require.NoError(t, c.WaitConnected(ctx))
	require.Equal(t, []string{primary.URL(), standby.URL()}, c.Brokers())
	require.Equal(t, primary.URL(), c.Broker())
	require.Equal(t, primary.URL(), c.Stats().Broker)
	require.Equal(t, primary.URL(), statusBroker(t, primary.Addr(), c.StatusTopic()))

	sub, err := subscribers.New("cmd/#", subscribers.Options{Depth: 100})
	require.NoError(t, err)
	waitset.New(nil, nil).Register(sub.Entity(), waitset.Subscription) // no executor: the test takes
	require.NoError(t, c.Attach(sub))
	pub, err := c.Publisher("out/x", bus.WithQoS(1))
	require.NoError(t, err)
	sink := newRecorder()
	attachRaw(t, standby.URL(), "out/#", sink)

	lost := time.Now()
	primary.Stop()
	// Published while the client finds the standby: they wait, and go
	// there.
	for i := range 20 {
		require.NoError(t, pub.Publish(context.Background(), []byte(fmt.Sprint(i))))
	}
	eventually(t, "connected to the standby", func() bool { return c.Stats().Broker == standby.URL() })
	took := time.Since(lost)
	t.Logf("connected to the standby %v after the primary stopped", took.Round(time.Millisecond))
	require.Less(t, took, failoverWithin)

	st := c.Stats()
	require.Equal(t, uint64(1), st.Reconnects)
	require.Equal(t, uint64(1), st.SessionsLost, "the standby has no session of the client")
	require.Equal(t, standby.URL(), c.Broker())
	require.Equal(t, standby.URL(), statusBroker(t, standby.Addr(), c.StatusTopic()))
	sink.waitCount(t, 20)

	// Subscribed again on the standby.
	raw := rawClient(t, standby.URL())
	eventually(t, "a message through the subscription made again", func() bool {
		publish(t, raw, "cmd/go", 1, false, "go")
		time.Sleep(20 * time.Millisecond)
		var m subscribers.Message
		ok, _ := sub.Take(&m)
		return ok && string(m.Payload) == "go"
	})

	log := logs.String()
	require.Equal(t, 1, strings.Count(log, "the broker has no session"), log)
	require.Contains(t, log, "previous_broker="+primary.URL())
	require.Contains(t, log, "filters=[cmd/#]")
	require.Contains(t, log, "next="+standby.URL())
}

// While no broker of the list answers, the client tries each in turn, and
// its error names every one; it connects to the one that appears.
func TestBrokersNoneAnswers(t *testing.T) {
	ports := []int{mqtttest.FreePort(t), mqtttest.FreePort(t)}
	urls := []string{fmt.Sprintf("tcp://127.0.0.1:%d", ports[0]), fmt.Sprintf("tcp://127.0.0.1:%d", ports[1])}
	c, err := mqtt.Dial(mqtt.Config{Brokers: urls, ClientID: clientID(t, "robot"), StatusTopic: "-",
		MinBackoff: 50 * time.Millisecond, MaxBackoff: 200 * time.Millisecond, Logger: newLogSink(t).logger()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	eventually(t, "an attempt on each broker", func() bool { return c.Stats().ConnectFailures >= 2 })
	last := c.LastError()
	require.Error(t, last)
	for _, u := range urls {
		require.ErrorContains(t, last, "connect to "+u)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err = c.WaitConnected(ctx)
	require.ErrorContains(t, err, "not connected to "+urls[0]+", "+urls[1])

	b, err := broker.New(broker.Config{Listen: fmt.Sprintf("127.0.0.1:%d", ports[1]), Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	ctx, cancel = context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	require.NoError(t, c.WaitConnected(ctx))
	require.Equal(t, urls[1], c.Broker())
	require.NoError(t, c.LastError())
	require.Zero(t, c.Stats().SessionsLost, "a first connection loses no session")
}

// Broker and Brokers are one or the other, and each URL of the list is
// checked.
func TestBrokersConfig(t *testing.T) {
	_, err := mqtt.Dial(mqtt.Config{Broker: "tcp://a:1883", Brokers: []string{"tcp://b:1883"}})
	require.ErrorContains(t, err, "Broker tcp://a:1883 and Brokers both set")
	_, err = mqtt.Dial(mqtt.Config{Brokers: []string{"tcp://b:1883", "http://u:hunter2@c:1"}})
	require.ErrorContains(t, err, `broker URL http://c:1: scheme "http"`)
	require.NotContains(t, err.Error(), "hunter2")
}

// statusBroker reads the retained status on topic at the broker at addr
// with an MQTT 5 client, and returns its broker property once it says
// online.
func statusBroker(t *testing.T, addr, topic string) string {
	t.Helper()
	got := make(chan string, 16)
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	pc := paho.NewClient(paho.ClientConfig{Conn: conn, OnPublishReceived: []func(paho.PublishReceived) (bool, error){
		func(p paho.PublishReceived) (bool, error) {
			if string(p.Packet.Payload) == mqtt.StatusOnline && p.Packet.Properties != nil {
				got <- p.Packet.Properties.User.Get(mqtt.BrokerProperty)
			}
			return true, nil
		}}})
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	_, err = pc.Connect(ctx, &paho.Connect{ClientID: clientID(t, "status"), CleanStart: true, KeepAlive: 30})
	require.NoError(t, err)
	defer func() { _ = pc.Disconnect(&paho.Disconnect{}) }()
	_, err = pc.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: topic}}})
	require.NoError(t, err)
	select {
	case b := <-got:
		return b
	case <-ctx.Done():
		t.Fatalf("no online status on %s at %s within %v", topic, addr, waitFor)
		return ""
	}
}

// attachRaw records, into rec, what a plain client of url subscribed to
// filter at QoS 1 receives.
func attachRaw(t *testing.T, url, filter string, rec *recorder) {
	t.Helper()
	c := rawClient(t, url)
	tok := c.Subscribe(filter, 1, func(_ paho3.Client, m paho3.Message) {
		rec.add(context.Background(), subscribers.Message{Topic: m.Topic(), Payload: m.Payload(), QoS: m.Qos()})
	})
	require.True(t, tok.WaitTimeout(waitFor) && tok.Error() == nil, "subscribe %s: %v", filter, tok.Error())
}
