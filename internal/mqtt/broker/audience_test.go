package broker_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/internal/mqtt/broker"
	"github.com/robotexec/robotexec/subscribers"
)

func dialClient(t *testing.T, url, id string, cfg mqtt.Config) *mqtt.Client {
	t.Helper()
	cfg.Broker, cfg.ClientID, cfg.StatusTopic, cfg.Logger, cfg.QoS = url, id, "-", quiet, 1
	c, err := mqtt.Dial(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, c.WaitConnected(ctx))
	return c
}

// A client's audience is every other client's subscriptions, live or
// persistent, and every shared subscription; its generation changes with
// them.
func TestAudienceOf(t *testing.T) {
	b, err := broker.New(broker.Config{Listen: "127.0.0.1:0", Logger: quiet})
	require.NoError(t, err)
	defer b.Close()
	a := b.AudienceOf("self")
	self := dialClient(t, b.URL(), "self", mqtt.Config{InProcess: true})
	ex := executor.New(executor.Options{Workers: 1, Logger: quiet})
	subscribe := func(c *mqtt.Client, filter string) *subscribers.Subscription {
		s, err := ex.NewOwner("n", nil).Subscribe(c, filter, func(ctx context.Context, _ subscribers.Message) {})
		require.NoError(t, err)
		return s
	}
	subscribe(self, "a/#")
	require.False(t, a.Wanted("a/x"), "only the client itself subscribes")

	gen := a.Generation()
	other := dialClient(t, b.URL(), "other", mqtt.Config{CleanSession: true})
	s := subscribe(other, "a/+")
	require.NotEqual(t, gen, a.Generation())
	require.True(t, a.Wanted("a/x"))
	require.False(t, a.Wanted("b/x"))

	gen = a.Generation()
	s.Close() // a clean session unsubscribes
	require.Eventually(t, func() bool { return !a.Wanted("a/x") }, 10*time.Second, 10*time.Millisecond)
	require.NotEqual(t, gen, a.Generation())

	subscribe(self, "$share/g/b/+")
	require.True(t, a.Wanted("b/x"), "the broker picks a shared subscription's member")
}

// The client's own retained messages that the broker keeps are its
// audience's to give: not those another client replaced.
func TestAudienceOwnRetained(t *testing.T) {
	b, err := broker.New(broker.Config{Listen: "127.0.0.1:0", Logger: quiet})
	require.NoError(t, err)
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	self := dialClient(t, b.URL(), "self", mqtt.Config{})
	other := dialClient(t, b.URL(), "other", mqtt.Config{CleanSession: true})
	require.NoError(t, self.PublishWait(ctx, subscribers.Message{Topic: "state/a", Payload: []byte("on"), QoS: 1, Retained: true}))
	require.NoError(t, self.PublishWait(ctx, subscribers.Message{Topic: "state/b", Payload: []byte("on"), QoS: 1, Retained: true}))
	k := b.AudienceOf("self").(bus.RetainKeeper)
	own := k.OwnRetained("state/#")
	require.Len(t, own, 2)
	require.NoError(t, other.PublishWait(ctx, subscribers.Message{Topic: "state/b", Payload: []byte("off"), QoS: 1, Retained: true}))
	own = k.OwnRetained("state/#")
	require.Len(t, own, 1)
	require.Equal(t, "state/a", own[0].Topic)
	require.Equal(t, "on", string(own[0].Payload))
	require.True(t, own[0].Retained)
}
