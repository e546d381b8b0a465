package broker_test

import (
	"log/slog"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/mochi-mqtt/server/v2/packets"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/mqtt/broker"
	"github.com/robotexec/robotexec/internal/syncbuf"
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
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
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

	wait(t, anon.Publish("other/x", 1, false, "x"))
	wait(t, anon.Publish("sensors/imu", 1, false, "x"))
	wait(t, alice.Publish("cmd/go", 1, false, "x"))
	// alice: sensors/imu through # and through the shared subscription;
	// anon: cmd/go. Not other/x (to alice).
	require.ElementsMatch(t, []string{"sensors/imu", "sensors/imu", "cmd/go"}, receive(t, got, 3))

	// alice may not write sensors/imu nor cmd/go/far: the broker
	// acknowledges her publications at QoS 1 and 2 (MQTT 3.1.1 has no
	// code to refuse them), keeps her connected, and counts them; its log
	// names them without their payload.
	wait(t, alice.Publish("cmd/go/far", 0, false, "x"))
	wait(t, alice.Publish("sensors/imu", 1, true, "hunter2"))
	wait(t, alice.Publish("sensors/imu", 2, true, "hunter2"))
	require.True(t, alice.IsConnectionOpen())
	require.Equal(t, uint64(3), b.Stats().Unauthorized)
	require.Contains(t, logs.String(), `msg="broker: publication not authorized" client=alice user=alice topic=sensors/imu`)
	require.NotContains(t, logs.String(), "hunter2")

	// Nor are they delivered (they would come before a later message),
	// nor retained (the broker sends retained messages as a client
	// subscribes, before it handles the client's next packet).
	wait(t, anon.Publish("sensors/marker", 1, false, "x"))
	require.Equal(t, []string{"sensors/marker"}, receive(t, got, 1))
	late, err := pahoClient(t, b, "late", "", "")
	require.NoError(t, err)
	lateIn := make(inbox, 4)
	wait(t, late.Subscribe("sensors/#", 1, lateIn.handle))
	wait(t, late.Publish("sensors/late", 1, false, "x"))
	require.Equal(t, "sensors/late", lateIn.next(t).Topic(), "a refused publication was retained")
}

// receive returns the next n topics from got, failing after 10 seconds.
func receive(t *testing.T, got <-chan string, n int) []string {
	t.Helper()
	var topics []string
	for len(topics) < n {
		select {
		case topic := <-got:
			topics = append(topics, topic)
		case <-time.After(10 * time.Second):
			t.Fatalf("received %v", topics)
		}
	}
	return topics
}

// syncBuffer is a bytes.Buffer for concurrent writes and reads.
type syncBuffer = syncbuf.Buffer

// An MQTT 5 client's publication to a topic it may not write to is
// refused with reason code 0x87 at QoS 1 and 2 (dropped at QoS 0),
// neither delivered nor retained, and counted; the client stays
// connected. A topic alias counts as its topic.
func TestUnauthorizedPublicationMQTT5(t *testing.T) {
	b, err := broker.New(broker.Config{Listen: "127.0.0.1:0", Logger: quiet,
		Users: map[string]broker.User{"alice": {Password: "pw", Read: []string{"#"}, Write: []string{"cmd/+"}}}})
	require.NoError(t, err)
	defer b.Close()
	alice := dialRaw(t, b.Addr(), 5, packets.Packet{Connect: packets.ConnectParams{ClientIdentifier: "alice", Clean: true,
		Keepalive: 60, UsernameFlag: true, Username: []byte("alice"), PasswordFlag: true, Password: []byte("pw")}})
	alice.subscribe("#")
	publish := func(id uint16, qos byte, topic string, alias uint16) {
		pk := packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Publish, Qos: qos, Retain: true},
			PacketID: id, TopicName: topic, Payload: []byte("x")}
		if alias > 0 {
			pk.Properties = packets.Properties{TopicAlias: alias, TopicAliasFlag: true}
		}
		alice.send(pk)
	}
	ack := func(want byte, id uint16, code byte) {
		t.Helper()
		fh, body := alice.read()
		require.Equal(t, want, fh.Type)
		pk := packets.Packet{FixedHeader: fh, ProtocolVersion: 5}
		require.NoError(t, pk.PubackDecode(body)) // PUBREC's layout is PUBACK's
		require.Equal(t, id, pk.PacketID)
		require.Equal(t, code, pk.ReasonCode)
	}
	publish(0, 0, "sensors/imu", 0)
	publish(1, 1, "sensors/imu", 0)
	ack(packets.Puback, 1, packets.ErrNotAuthorized.Code)
	publish(2, 2, "sensors/imu", 0)
	ack(packets.Pubrec, 2, packets.ErrNotAuthorized.Code)
	publish(3, 1, "cmd/go", 7)
	ack(packets.Puback, 3, packets.CodeSuccess.Code)
	require.Equal(t, uint64(3), b.Stats().Unauthorized)
	// Had the broker routed a refused publication, alice would get it
	// before her own cmd/go.
	topic, _ := alice.readPublish()
	require.Equal(t, "cmd/go", topic)
	publish(4, 1, "", 7)
	ack(packets.Puback, 4, packets.CodeSuccess.Code)
	topic, _ = alice.readPublish()
	require.Equal(t, "cmd/go", topic, "through its alias")
	require.Equal(t, uint64(3), b.Stats().Unauthorized)

	// The broker sends a filter's retained messages as a client
	// subscribes, before it handles the client's next packet.
	alice.send(packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Subscribe, Qos: 1}, PacketID: 5,
		Filters: packets.Subscriptions{{Filter: "sensors/#", Qos: 1}}})
	fh, _ := alice.read()
	require.Equal(t, packets.Suback, fh.Type)
	publish(6, 1, "cmd/sync", 0)
	ack(packets.Puback, 6, packets.CodeSuccess.Code)
	topic, _ = alice.readPublish()
	require.Equal(t, "cmd/sync", topic, "a refused publication was retained")
}
