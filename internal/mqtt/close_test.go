package mqtt_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/internal/mqtttest"
)

// Close says what it gave up on: a QoS 1 publication written into a
// blackholed link is never acknowledged, and Close returns
// ErrUnacknowledged (and the same again) instead of nil.
func TestCloseReportsUnacknowledged(t *testing.T) {
	forEachBroker(t, mqtttest.MosquittoOptions{}, func(t *testing.T, b mqtttest.Broker) {
		p := mqtttest.NewProxy(t, b.Addr())
		c := dial(t, p.URL(), mqtt.Config{QoS: 1})
		pub, err := c.Publisher("close/x", bus.WithQoS(1))
		require.NoError(t, err)
		require.NoError(t, pub.Publish(context.Background(), []byte("acknowledged")))
		require.NoError(t, c.Close(), "nothing pending")

		c = dial(t, p.URL(), mqtt.Config{QoS: 1})
		pub, err = c.Publisher("close/x", bus.WithQoS(1))
		require.NoError(t, err)
		p.Blackhole(true)
		require.NoError(t, pub.Publish(context.Background(), []byte("lost")))
		err = c.Close()
		require.True(t, errors.Is(err, mqtt.ErrUnacknowledged), "%v", err)
		require.Equal(t, err, c.Close(), "idempotent")
		p.Blackhole(false)
	})
}

// Shutdown gives up at ctx's deadline instead of after 2 s a step, and
// its error names what did not stop along with ctx.Err(); with nothing
// pending it returns nil.
func TestCloseContextGivesUpAtDeadline(t *testing.T) {
	forEachBroker(t, mqtttest.MosquittoOptions{}, func(t *testing.T, b mqtttest.Broker) {
		p := mqtttest.NewProxy(t, b.Addr())
		c := dial(t, p.URL(), mqtt.Config{QoS: 1})
		require.NoError(t, c.Shutdown(context.Background()), "nothing pending")

		c = dial(t, p.URL(), mqtt.Config{QoS: 1})
		pub, err := c.Publisher("close/y", bus.WithQoS(1))
		require.NoError(t, err)
		p.Blackhole(true)
		require.NoError(t, pub.Publish(context.Background(), []byte("lost")))
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		start := time.Now()
		err = c.Shutdown(ctx)
		require.Less(t, time.Since(start), 1500*time.Millisecond, "waited past the deadline")
		require.ErrorIs(t, err, mqtt.ErrUnacknowledged)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.Equal(t, err, c.Close(), "idempotent with Close")
		p.Blackhole(false)
	})
}
