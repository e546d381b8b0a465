package broker_test

import (
	"log/slog"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/mqtt/broker"
)

// A robot's client reconnects with its client ID while its old
// connection is still open: the new connection takes the persistent
// session over (its subscriptions with it), and the old connection's
// will, now stale, does not overwrite the robot's "online" status. The
// new connection's will, when that connection drops, does.
func TestTakeoverAndWills(t *testing.T) {
	var logs syncBuffer
	b, err := broker.New(broker.Config{Listen: "127.0.0.1:0",
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	require.NoError(t, err)
	defer b.Close()
	watcher, err := pahoClient(t, b, "watcher", "", "")
	require.NoError(t, err)
	status := make(inbox, 16)
	wait(t, watcher.Subscribe("robot/status", 1, status.handle))
	// Where the broker sends a stale will: a topic no wildcard matches.
	wait(t, watcher.Subscribe("$robotexec/stale-will", 1, status.handle))

	cmds := make(inbox, 16)
	robot := func(lost chan<- error, conn chan<- net.Conn) paho.Client {
		o := paho.NewClientOptions().AddBroker(b.URL()).SetClientID("robot").SetCleanSession(false).
			SetAutoReconnect(false).SetConnectRetry(false).SetWill("robot/status", "offline", 1, true).
			SetDefaultPublishHandler(cmds.handle).
			SetConnectionLostHandler(func(_ paho.Client, err error) { lost <- err }).
			SetCustomOpenConnectionFn(func(u *url.URL, _ paho.ClientOptions) (net.Conn, error) {
				c, err := net.DialTimeout("tcp", u.Host, 10*time.Second)
				if err == nil {
					conn <- c
				}
				return c, err
			})
		c := paho.NewClient(o)
		wait(t, c.Connect())
		t.Cleanup(func() { c.Disconnect(0) })
		return c
	}
	oldLost, newLost := make(chan error, 1), make(chan error, 1)
	oldConn, newConn := make(chan net.Conn, 1), make(chan net.Conn, 1)
	old := robot(oldLost, oldConn)
	wait(t, old.Subscribe("robot/cmd", 1, nil))
	wait(t, old.Publish("robot/status", 1, true, "online"))
	m := status.next(t)
	require.Equal(t, "robot/status online", m.Topic()+" "+string(m.Payload()))

	oldAddr := (<-oldConn).LocalAddr().String()
	next := robot(newLost, newConn)
	select {
	case <-oldLost:
	case <-time.After(10 * time.Second):
		t.Fatal("the old connection is still open")
	}
	// The old connection's goroutine handles its will, then logs its end.
	// mochi publishes the will when the takeover finds that goroutine
	// waiting for a packet, and drops it when it finds it between two
	// packets: either way, it must not reach robot/status. Once the log
	// says so, a voided will is queued for the watcher before the new
	// connection's "online".
	require.Eventually(t, func() bool { return loggedEnd(logs.String(), oldAddr) }, 10*time.Second, time.Millisecond,
		"the old connection's end is not logged: %s", &logs)
	wait(t, next.Publish("robot/status", 1, true, "online"))
	for {
		m := status.next(t)
		got := m.Topic() + " " + string(m.Payload())
		if got == "robot/status online" {
			break
		}
		require.Equal(t, "$robotexec/stale-will offline", got)
	}

	pub, err := pahoClient(t, b, "pub", "", "")
	require.NoError(t, err)
	wait(t, pub.Publish("robot/cmd", 1, false, "go"))
	m = cmds.next(t)
	require.Equal(t, "robot/cmd go", m.Topic()+" "+string(m.Payload()), "the session's subscription")

	// The connection drops without a DISCONNECT: its will goes out, and
	// stays retained.
	require.NoError(t, (<-newConn).Close())
	m = status.next(t)
	require.Equal(t, "robot/status offline", m.Topic()+" "+string(m.Payload()))
	late, err := pahoClient(t, b, "late", "", "")
	require.NoError(t, err)
	lateIn := make(inbox, 1)
	wait(t, late.Subscribe("robot/status", 1, lateIn.handle))
	m = lateIn.next(t)
	require.Equal(t, "robot/status offline", m.Topic()+" "+string(m.Payload()))
	require.True(t, m.Retained())
}

// loggedEnd reports whether logs has mochi's record that the connection
// from remote ended, which it writes after handling the connection's will.
func loggedEnd(logs, remote string) bool {
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, `msg="broker: client disconnected"`) && strings.Contains(line, " remote="+remote+" ") {
			return true
		}
	}
	return false
}

// A persistent session holds up to MaxQueued QoS 1 messages while its
// client is away; the broker drops those beyond, with a warning, and
// sends the others when the client is back.
func TestOfflineQueueLimit(t *testing.T) {
	var logs syncBuffer
	b, err := broker.New(broker.Config{Listen: "127.0.0.1:0", MaxQueued: 3,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	require.NoError(t, err)
	defer b.Close()
	in := make(inbox, 16)
	connect := func() paho.Client {
		c := paho.NewClient(paho.NewClientOptions().AddBroker(b.URL()).SetClientID("sub").SetCleanSession(false).
			SetAutoReconnect(false).SetConnectRetry(false).SetDefaultPublishHandler(in.handle))
		wait(t, c.Connect())
		return c
	}
	sub := connect()
	wait(t, sub.Subscribe("q/#", 1, nil))
	gen := b.AudienceOf("pub").Generation()
	sub.Disconnect(0)
	require.Eventually(t, func() bool { return b.AudienceOf("pub").Generation() != gen }, 10*time.Second, time.Millisecond,
		"the broker saw sub leave")
	pub, err := pahoClient(t, b, "pub", "", "")
	require.NoError(t, err)
	// The broker acknowledges a QoS 1 publication before it sends it to
	// subscribers, but handles a client's packets in order: once none/x
	// is acknowledged, the others are queued or dropped.
	for _, topic := range []string{"q/0", "q/1", "q/2", "q/3", "q/4", "none/x"} {
		wait(t, pub.Publish(topic, 1, false, "x"))
	}
	require.Equal(t, 2, strings.Count(logs.String(), `level=WARN msg="broker: client store quota reached" client=sub`), "%s", &logs)

	sub = connect()
	defer sub.Disconnect(0)
	var got []string
	for len(got) < 3 {
		got = append(got, in.next(t).Topic())
	}
	require.ElementsMatch(t, []string{"q/0", "q/1", "q/2"}, got)
	wait(t, pub.Publish("q/marker", 0, false, "x"))
	require.Equal(t, "q/marker", in.next(t).Topic())
}
