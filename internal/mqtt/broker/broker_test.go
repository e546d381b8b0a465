package broker_test

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/internal/mqtt/broker"
)

var quiet = slog.New(slog.DiscardHandler)

// Port 0 picks a free port that Addr and URL report; Close stops the
// listener and may be called twice.
func TestPortZeroAndClose(t *testing.T) {
	b, err := broker.New(broker.Config{Listen: "127.0.0.1:0", Logger: quiet})
	require.NoError(t, err)
	host, port, err := net.SplitHostPort(b.Addr())
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1", host)
	require.NotEqual(t, "0", port)
	require.Equal(t, "tcp://"+b.Addr(), b.URL())

	c, err := net.DialTimeout("tcp", b.Addr(), time.Second)
	require.NoError(t, err)
	require.NoError(t, c.Close())

	require.NoError(t, b.Close())
	require.NoError(t, b.Close())
	_, err = net.DialTimeout("tcp", b.Addr(), time.Second)
	require.Error(t, err)
}

// A port in use and bad limits are errors that say so.
func TestNewErrors(t *testing.T) {
	b, err := broker.New(broker.Config{Listen: "127.0.0.1:0", Logger: quiet})
	require.NoError(t, err)
	defer b.Close()
	_, err = broker.New(broker.Config{Listen: b.Addr(), Logger: quiet})
	require.ErrorContains(t, err, b.Addr())
	_, err = broker.New(broker.Config{Listen: "127.0.0.1:0", MaxQueued: 70000})
	require.ErrorContains(t, err, "MaxQueued")
}

// A connection that never sends CONNECT does not hold Close up (mochi
// alone would wait for it forever).
func TestCloseWithSilentConnection(t *testing.T) {
	b, err := broker.New(broker.Config{Listen: "127.0.0.1:0", Logger: quiet})
	require.NoError(t, err)
	c, err := net.DialTimeout("tcp", b.Addr(), time.Second)
	require.NoError(t, err)
	defer c.Close()
	start := time.Now()
	require.NoError(t, b.Close())
	require.Less(t, time.Since(start), time.Second)
}

// Users restricts connections to listed users; routine messages are
// logged at Debug only.
func TestUsersAndQuietLogs(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	b, err := broker.New(broker.Config{Listen: "127.0.0.1:0", Logger: logger, Users: map[string]broker.User{"alice": {Password: "s3cret"}}})
	require.NoError(t, err)
	defer b.Close()

	connect := func(user, password string, wait time.Duration) error {
		c, err := mqtt.Dial(mqtt.Config{Broker: b.URL(), ClientID: "t-" + user + password, Username: user, Password: password, Logger: quiet})
		require.NoError(t, err)
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		return c.WaitConnected(ctx)
	}
	require.NoError(t, connect("alice", "s3cret", 10*time.Second))
	require.ErrorIs(t, connect("alice", "wrong", 300*time.Millisecond), mqtt.ErrNotAuthorized)
	require.ErrorIs(t, connect("bob", "s3cret", 300*time.Millisecond), mqtt.ErrNotAuthorized)
	require.NoError(t, b.Close())
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		require.NotContains(t, line, "level=INFO", "routine message logged at Info: %s", line)
	}
}

// Shutdown stops the broker as Close does; with a ctx already ended
// and a connected client it gives up at once, naming the clients and
// ctx.Err(), and the goroutines end all the same as their reads fail.
func TestCloseContext(t *testing.T) {
	b, err := broker.New(broker.Config{Listen: "127.0.0.1:0", Logger: quiet})
	require.NoError(t, err)
	require.NoError(t, b.Shutdown(context.Background()))
	require.NoError(t, b.Close(), "idempotent with Close")

	b, err = broker.New(broker.Config{Listen: "127.0.0.1:0", Logger: quiet})
	require.NoError(t, err)
	c, err := mqtt.Dial(mqtt.Config{Broker: b.URL(), ClientID: "t-closectx", Logger: quiet})
	require.NoError(t, err)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	require.NoError(t, c.WaitConnected(ctx))
	cancel()
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	err = b.Shutdown(ctx)
	if err != nil { // the client may have gone before the check
		require.ErrorIs(t, err, broker.ErrClientsConnected)
		require.ErrorIs(t, err, context.Canceled)
	}
	_, err = net.DialTimeout("tcp", strings.TrimPrefix(b.URL(), "tcp://"), time.Second)
	require.Error(t, err, "the broker no longer listens, whether or not the client had gone")
}
