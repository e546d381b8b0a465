package mqtt_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/mqtttest"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/subscribers/mqtt"
	"github.com/robotexec/robotexec/subscribers/mqtt/broker"
)

// A user restricted to a/# on the embedded broker: its own topics refused
// cost the client its fences, said once at Warn, not an error; a
// publication the broker refuses (it then drops the connection) fails
// PublishWait with ErrUnconfirmed instead of passing for acknowledged,
// and is not sent again; Writable refuses a publication elsewhere at once.
func TestRestrictedUser(t *testing.T) {
	b := mqtttest.Embedded(t, broker.Config{Logger: newLogSink(t).logger(),
		Users: map[string]broker.User{"alice": {Password: "pw", Read: []string{"a/#"}, Write: []string{"a/#"}}}})
	logs := newLogSink(t)
	base := mqtt.Config{Username: "alice", Password: "pw", QoS: 1, CleanSession: true, Logger: logs.logger()}

	c := dial(t, b.URL(), base)
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	require.NoError(t, c.PublishWait(ctx, subscribers.Message{Topic: "a/x", QoS: 1, Payload: []byte("ok")}))
	require.NoError(t, c.LeaveShared(ctx), "no drain mark to wait for")
	require.Equal(t, 1, strings.Count(logs.String(), "refuses this client its own topics"), "%s", logs)
	require.NotContains(t, logs.String(), "level=ERROR")

	// The broker closes the connection on the refused publication, which
	// the client then drops instead of sending it again.
	err := c.PublishWait(ctx, subscribers.Message{Topic: "b/x", QoS: 1, Payload: []byte("refused")})
	require.ErrorIs(t, err, mqtt.ErrUnconfirmed)
	require.Contains(t, err.Error(), `"b/x"`)
	eventually(t, "dropped after closing a second connection", func() bool { return strings.Contains(logs.String(), "dropped, not sent again") })
	require.NoError(t, c.WaitConnected(ctx))
	require.NoError(t, c.PublishWait(ctx, subscribers.Message{Topic: "a/y", QoS: 1, Payload: []byte("ok")}))
	require.Equal(t, uint64(2), c.Stats().Reconnects, "the refused publication closed two connections")

	base.Writable = []string{"a/#"}
	w := dial(t, b.URL(), base)
	failed := w.Stats().PublishFailed
	err = w.PublishWait(ctx, subscribers.Message{Topic: "b/x", QoS: 1, Payload: []byte("refused")})
	require.ErrorIs(t, err, mqtt.ErrForbidden)
	pub, err := w.Publisher("b/y", 1, false)
	require.NoError(t, err)
	require.ErrorIs(t, pub.Publish([]byte("refused")), mqtt.ErrForbidden)
	require.Equal(t, failed+2, w.Stats().PublishFailed)
	require.Zero(t, w.Stats().Reconnects)
}
