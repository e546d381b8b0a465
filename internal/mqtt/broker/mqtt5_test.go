package broker_test

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	paho5 "github.com/eclipse/paho.golang/paho"
	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/mqtt/broker"
)

// inbox collects the messages a paho client receives.
type inbox chan paho.Message

func (in inbox) handle(_ paho.Client, m paho.Message) { in <- m }

// next returns the next message, failing after 10 seconds.
func (in inbox) next(t *testing.T) paho.Message {
	t.Helper()
	select {
	case m := <-in:
		return m
	case <-time.After(10 * time.Second):
		t.Fatal("no message in 10 s")
		return nil
	}
}

// wait completes a paho token, requiring success within 10 seconds.
func wait(t *testing.T, tok paho.Token) {
	t.Helper()
	require.True(t, tok.WaitTimeout(10*time.Second), "no answer from the broker")
	require.NoError(t, tok.Error())
}

// v5Client is an MQTT 5 client (paho5.golang) that records what it
// receives: topic, payload and subscription identifier.
type v5Client struct {
	c    *paho5.Client
	mu   sync.Mutex
	got  []string
	hold chan struct{} // when not nil, each message waits for a receive from it
}

func dialV5(t *testing.T, addr, id string, recvMax uint16, hold chan struct{}) *v5Client {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	v := &v5Client{hold: hold}
	v.c = paho5.NewClient(paho5.ClientConfig{Conn: conn, OnPublishReceived: []func(paho5.PublishReceived) (bool, error){
		func(p paho5.PublishReceived) (bool, error) {
			if v.hold != nil {
				<-v.hold
			}
			id := 0
			if s := p.Packet.Properties; s != nil && s.SubscriptionIdentifier != nil {
				id = *s.SubscriptionIdentifier
			}
			v.mu.Lock()
			v.got = append(v.got, fmt.Sprintf("%s %s %d", p.Packet.Topic, p.Packet.Payload, id))
			v.mu.Unlock()
			return true, nil
		}}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = v.c.Connect(ctx, &paho5.Connect{ClientID: id, CleanStart: true, KeepAlive: 30,
		Properties: &paho5.ConnectProperties{ReceiveMaximum: &recvMax}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = v.c.Disconnect(&paho5.Disconnect{}) })
	return v
}

func (v *v5Client) subscribe(t *testing.T, filter string, id int, noLocal bool) {
	t.Helper()
	_, err := v.c.Subscribe(context.Background(), &paho5.Subscribe{Properties: &paho5.SubscribeProperties{SubscriptionIdentifier: &id},
		Subscriptions: []paho5.SubscribeOptions{{Topic: filter, QoS: 1, NoLocal: noLocal}}})
	require.NoError(t, err)
}

func (v *v5Client) publish(t *testing.T, topic, payload string, retain bool) {
	t.Helper()
	_, err := v.c.Publish(context.Background(), &paho5.Publish{Topic: topic, Payload: []byte(payload), QoS: 1, Retain: retain})
	require.NoError(t, err)
}

func (v *v5Client) waitFor(t *testing.T, n int) []string {
	t.Helper()
	require.Eventually(t, func() bool {
		v.mu.Lock()
		defer v.mu.Unlock()
		return len(v.got) >= n
	}, 10*time.Second, time.Millisecond, "%d messages", n)
	time.Sleep(50 * time.Millisecond) // none more
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]string(nil), v.got...)
}

// A retained message sent for a new subscription carries that
// subscription's identifier (MQTT 5, 3.3.4); a live one carries every
// matching subscription's.
func TestRetainedSubscriptionIdentifier(t *testing.T) {
	b, err := broker.New(broker.Config{Listen: "127.0.0.1:0", Logger: quiet})
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	other := dialV5(t, b.Addr(), "other", 100, nil)
	// mochi acknowledges a publication before it routes it: other's own
	// copy says it was routed, before self subscribes (else self may get
	// it live too).
	other.subscribe(t, "r/t", 1, false)
	other.publish(t, "r/t", "kept", true)
	other.waitFor(t, 1)
	self := dialV5(t, b.Addr(), "self", 100, nil)
	self.subscribe(t, "r/#", 7, true)
	self.subscribe(t, "r/+", 9, true)
	require.Equal(t, []string{"r/t kept 7", "r/t kept 9"}, self.waitFor(t, 2))
	other.publish(t, "r/t", "", true)
}

// A client's own publication reaches its shared subscription that the
// broker picked, though a No Local subscription of the client matches it
// too; the No Local one does not get it.
func TestOwnPublicationToOwnSharedSubscription(t *testing.T) {
	b, err := broker.New(broker.Config{Listen: "127.0.0.1:0", Logger: quiet})
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	self := dialV5(t, b.Addr(), "self", 100, nil)
	self.subscribe(t, "w/+", 3, true)
	self.subscribe(t, "$share/g/w/2", 5, false)
	self.publish(t, "w/2", "own", false)
	require.Equal(t, []string{"w/2 own 5"}, self.waitFor(t, 1))
}

// A client whose Receive Maximum is 2 and who acknowledges slowly gets
// every message, in order: the broker does not use mochi's holding of
// messages past the Receive Maximum, which reorders and loses them, but
// its own (flow.go).
func TestSmallReceiveMaximum(t *testing.T) {
	b, err := broker.New(broker.Config{Listen: "127.0.0.1:0", Logger: quiet})
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	hold := make(chan struct{})
	slow := dialV5(t, b.Addr(), "slow", 2, hold)
	slow.subscribe(t, "q/t", 1, false)
	pub := dialV5(t, b.Addr(), "pub", 100, nil)
	const n = 50
	want := make([]string, n)
	for i := range n {
		pub.publish(t, "q/t", fmt.Sprint(i), false)
		want[i] = fmt.Sprintf("q/t %d 1", i)
	}
	go func() {
		for range n {
			hold <- struct{}{}
			time.Sleep(time.Millisecond)
		}
	}()
	require.Equal(t, want, slow.waitFor(t, n))
}
