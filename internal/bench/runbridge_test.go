package bench

import (
	"context"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/mqtt/broker"
)

// TestWireThroughRawForwarder runs the run group's measurer against the
// raw forwarder's role through the embedded broker: every message of a
// burst and of a paced run comes back forwarded, once.
func TestWireThroughRawForwarder(t *testing.T) {
	brk, err := broker.New(broker.Config{Listen: "127.0.0.1:0", Logger: discard})
	require.NoError(t, err)
	defer brk.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- RunChild(ctx, rawForwarderRole, []string{brk.URL(), "test-raw-forwarder"}) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()

	w, err := dialWire(brk.URL(), "test-wire")
	require.NoError(t, err)
	defer w.Close()
	require.NoError(t, w.ready(10*time.Second))
	rate, err := w.burst(500, 10*time.Second)
	require.NoError(t, err)
	require.Positive(t, rate)
	lat, err := w.paced(1000, 200*time.Millisecond, 10*time.Second)
	require.NoError(t, err)
	require.Len(t, lat, 200)
	require.Positive(t, lat[0], "one-way latencies are positive")
	require.Zero(t, w.cur.Load().dups.Load())
}

// TestRunChildUnknownRole: an unknown role is an error naming the roles.
func TestRunChildUnknownRole(t *testing.T) {
	err := RunChild(context.Background(), "no-such-role", nil)
	require.ErrorContains(t, err, rawForwarderRole)
}

// TestRunBridgeWithoutExecutable: without the executable the rows are not
// measured, which is not a failure.
func TestRunBridgeWithoutExecutable(t *testing.T) {
	s := &suite{ctx: context.Background(), cfg: Config{Repeat: 1, Budget: time.Second}}
	for _, m := range s.runBridge() {
		require.Empty(t, m.Error, m.Name)
		require.NotEmpty(t, m.NotMeasured, m.Name)
	}
}

// TestEndSession: endSession ends the persistent session that a stopped
// robotexec run process leaves at the broker; the next connection of
// that client id finds none.
func TestEndSession(t *testing.T) {
	brk, err := broker.New(broker.Config{Listen: "127.0.0.1:0", Logger: discard})
	require.NoError(t, err)
	defer brk.Close()
	sessionPresent := func() bool {
		o := paho.NewClientOptions().AddBroker(brk.URL()).SetClientID("test-ended").
			SetProtocolVersion(4).SetCleanSession(false).SetAutoReconnect(false)
		c := paho.NewClient(o)
		tok := c.Connect()
		require.True(t, tok.WaitTimeout(10*time.Second))
		require.NoError(t, tok.Error())
		defer c.Disconnect(50)
		if s := c.Subscribe("robot/+/data", 1, nil); !s.WaitTimeout(10*time.Second) || s.Error() != nil {
			t.Fatalf("subscribe: %v", s.Error())
		}
		return tok.(*paho.ConnectToken).SessionPresent()
	}
	sessionPresent()
	require.True(t, sessionPresent(), "the session is kept between connections")
	endSession(brk.URL(), "test-ended")
	require.False(t, sessionPresent(), "the session after endSession")
}
