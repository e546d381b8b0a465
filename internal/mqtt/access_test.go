package mqtt_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/internal/mqtt/broker"
	"github.com/robotexec/robotexec/internal/mqtttest"
	"github.com/robotexec/robotexec/subscribers"
)

// A user restricted to a/# on the embedded broker: the refusal of its own
// status topic is said once, at Warn, not an error; a publication
// elsewhere fails PublishWait with the broker's reason, not authorized,
// counted, and the connection stays (MQTT 5); with MQTT 3.1.1 the broker
// acknowledges and drops it, and the connection stays too. Writable
// refuses a publication elsewhere at once.
func TestRestrictedUser(t *testing.T) {
	b := mqtttest.Embedded(t, broker.Config{Logger: newLogSink(t).logger(),
		Users: map[string]broker.User{"alice": {Password: "pw", Read: []string{"a/#"}, Write: []string{"a/#"}}}})
	for _, protocol := range []string{mqtt.Protocol5, mqtt.Protocol311} {
		t.Run(protocol, func(t *testing.T) {
			logs := newLogSink(t)
			base := mqtt.Config{Username: "alice", Password: "pw", QoS: 1, CleanSession: true, Protocol: protocol, Logger: logs.logger()}
			c := dial(t, b.URL(), base)
			ctx, cancel := context.WithTimeout(context.Background(), waitFor)
			defer cancel()
			require.NoError(t, c.PublishWait(ctx, subscribers.Message{Topic: "a/x", QoS: 1, Payload: []byte("ok")}))
			require.NotContains(t, logs.String(), "level=ERROR")

			err := c.PublishWait(ctx, subscribers.Message{Topic: "b/x", QoS: 1, Payload: []byte("refused")})
			if protocol == mqtt.Protocol5 {
				require.Equal(t, 1, strings.Count(logs.String(), "the broker refused to subscribe"), "%s", logs)
				require.ErrorIs(t, err, mqtt.NotAuthorized)
				require.Contains(t, err.Error(), `"b/x"`)
				require.Contains(t, err.Error(), "not authorized")
				require.Equal(t, uint64(2), c.Stats().Refused[mqtt.NotAuthorized], "its status subscription and the publication")
			} else {
				require.NoError(t, err, "acknowledged, and dropped")
			}
			require.NoError(t, c.PublishWait(ctx, subscribers.Message{Topic: "a/y", QoS: 1, Payload: []byte("ok")}))
			require.Zero(t, c.Stats().Reconnects, "the connection stays")

			base.Writable = []string{"a/#"}
			w := dial(t, b.URL(), base)
			failed := w.Stats().PublishFailed
			err = w.PublishWait(ctx, subscribers.Message{Topic: "b/x", QoS: 1, Payload: []byte("refused")})
			require.ErrorIs(t, err, mqtt.ErrForbidden)
			pub, err := w.Publisher("b/y", bus.WithQoS(1))
			require.NoError(t, err)
			require.ErrorIs(t, pub.Publish(context.Background(), []byte("refused")), mqtt.ErrForbidden)
			require.Equal(t, failed+2, w.Stats().PublishFailed)
			require.Zero(t, w.Stats().Reconnects)
		})
	}
}
