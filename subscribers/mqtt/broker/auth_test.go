package broker_test

import (
	"github.com/robotexec/robotexec/internal/syncbuf"
	"log/slog"
	"strings"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/subscribers/mqtt/broker"
)

// pahoClient connects a paho client as user (anonymous when empty) and
// returns it, or the connection's error.
func pahoClient(t *testing.T, b *broker.Broker, id, user, password string) (paho.Client, error) {
	t.Helper()
	o := paho.NewClientOptions().AddBroker(b.URL()).SetClientID(id).SetAutoReconnect(false).
		SetConnectRetry(false).SetCleanSession(true).SetUsername(user).SetPassword(password)
	c := paho.NewClient(o)
	tok := c.Connect()
	require.True(t, tok.WaitTimeout(10*time.Second))
	if tok.Error() != nil {
		return nil, tok.Error()
	}
	t.Cleanup(func() { c.Disconnect(0) })
	return c, nil
}

// Who may connect: anonymous clients by default only without users;
// AnonymousAllowed and AnonymousRefused say so explicitly.
func TestAnonymous(t *testing.T) {
	users := map[string]broker.User{"alice": {Password: "pw"}}
	for _, tc := range []struct {
		name  string
		users map[string]broker.User
		anon  broker.Anonymous
		want  bool
	}{
		{"no users", nil, broker.AnonymousDefault, true},
		{"users", users, broker.AnonymousDefault, false},
		{"users, allowed", users, broker.AnonymousAllowed, true},
		{"no users, refused", nil, broker.AnonymousRefused, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := broker.New(broker.Config{Listen: "127.0.0.1:0", Logger: quiet, Users: tc.users, Anonymous: tc.anon})
			require.NoError(t, err)
			defer b.Close()
			_, err = pahoClient(t, b, "anon", "", "")
			require.Equal(t, tc.want, err == nil, "anonymous connection: %v", err)
			_, err = pahoClient(t, b, "mallory", "mallory", "pw")
			require.Equal(t, len(tc.users) == 0 && tc.anon != broker.AnonymousRefused, err == nil, "unknown user: %v", err)
		})
	}
}

// A user reads only the topics of Read, even through a wider or a shared
// subscription, and writes only those of Write; an anonymous client, when
// allowed, uses every topic.
func TestUserAccess(t *testing.T) {
	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	b, err := broker.New(broker.Config{Listen: "127.0.0.1:0", Logger: logger, Anonymous: broker.AnonymousAllowed,
		Users: map[string]broker.User{"alice": {Password: "pw", Read: []string{"sensors/#"}, Write: []string{"cmd/+"}}}})
	require.NoError(t, err)
	defer b.Close()
	alice, err := pahoClient(t, b, "alice", "alice", "pw")
	require.NoError(t, err)
	anon, err := pahoClient(t, b, "anon", "", "")
	require.NoError(t, err)

	got := make(chan string, 16)
	record := func(_ paho.Client, m paho.Message) { got <- m.Topic() }
	granted := func(c paho.Client, filter string) byte {
		tok := c.Subscribe(filter, 1, record).(*paho.SubscribeToken)
		require.True(t, tok.WaitTimeout(10*time.Second))
		require.NoError(t, tok.Error())
		// paho keys a shared subscription's result by its inner filter.
		require.Len(t, tok.Result(), 1)
		for _, code := range tok.Result() {
			return code
		}
		return 0
	}
	require.Equal(t, byte(1), granted(alice, "#"), "overlaps sensors/#")
	require.Equal(t, byte(1), granted(alice, "$share/g/sensors/imu"))
	require.Equal(t, byte(0x80), granted(alice, "other/#"))
	require.Equal(t, byte(1), granted(anon, "cmd/#"))

	publish := func(c paho.Client, topic string, qos byte) error {
		tok := c.Publish(topic, qos, false, "x")
		require.True(t, tok.WaitTimeout(10*time.Second))
		return tok.Error()
	}
	require.NoError(t, publish(anon, "other/x", 1))
	require.NoError(t, publish(anon, "sensors/imu", 1))
	require.NoError(t, publish(alice, "cmd/go", 1))
	require.NoError(t, publish(alice, "cmd/go/far", 0), "refused at QoS 0: dropped")
	var topics []string
	for len(topics) < 3 {
		select {
		case topic := <-got:
			topics = append(topics, topic)
		case <-time.After(10 * time.Second):
			t.Fatalf("received %v", topics)
		}
	}
	// alice: sensors/imu through # and through the shared subscription;
	// anon: cmd/go. Neither other/x (to alice) nor cmd/go/far (from her).
	require.ElementsMatch(t, []string{"sensors/imu", "sensors/imu", "cmd/go"}, topics)

	// A refused QoS 1 publication disconnects an MQTT 3.1.1 client; the
	// broker's log names it without its payload.
	alice.Publish("sensors/imu", 1, false, "hunter2")
	require.Eventually(t, func() bool { return !alice.IsConnectionOpen() }, 10*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), `pk="Publish \"sensors/imu\" (7 bytes, QoS 1)"`) },
		10*time.Second, 10*time.Millisecond, "%s", &logs)
	require.NotContains(t, logs.String(), "hunter2")
	select {
	case topic := <-got:
		t.Fatalf("unexpected delivery of %s", topic)
	case <-time.After(100 * time.Millisecond):
	}
}

// syncBuffer is a bytes.Buffer for concurrent writes and reads.
type syncBuffer = syncbuf.Buffer
