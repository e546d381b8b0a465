package mqtt_test

import (
	"context"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/packets"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/subscribers"
)

// A PUBLISH whose header claims MQTT's largest packet, 256 MiB, from a
// broker that ignores the client's Maximum Packet Size: the client reads
// past it without holding more than its topic, counts it (too_large) on
// the subscription it was for, acknowledges it, and delivers the next
// message; the connection stays.
func TestHugeHeaderNotAllocated(t *testing.T) {
	const huge = 268435455 - (2 + 5 + 2 + 1)
	fb := newFakeBroker(t, func(c net.Conn, r *packetReader) {
		<-r.subs
		if err := writeHugePublish(c, "big/t", 7, huge); err != nil {
			return
		}
		small := packets.Publish{Topic: "big/t", QoS: 1, PacketID: 8, Payload: []byte("small"), Properties: &packets.Properties{}}
		_, _ = small.WriteTo(c)
	})
	c := dial(t, fb.URL(), mqtt.Config{QoS: 1, StatusTopic: "-", MaxPayload: 1024})
	ex := executor.New(executor.Options{Workers: 1})
	rec := newRecorder()
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	sub, err := ex.NewOwner("n", nil).Subscribe(c, "big/#", rec.add)
	require.NoError(t, err)
	startExecutor(t, ex)
	msgs := rec.waitCount(t, 1)
	require.Equal(t, "small", string(msgs[0].Payload))
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<20), "allocated while reading a 256 MiB claim")
	require.EqualValues(t, 1, sub.Stats().Dropped[subscribers.TooLarge])
	require.EqualValues(t, 1, c.Stats().Dropped[subscribers.TooLarge])
	require.Zero(t, c.Stats().ConnectionLosses)
	for _, want := range []uint16{7, 8} {
		select {
		case id := <-fb.acks:
			require.Equal(t, want, id)
		case <-time.After(waitFor):
			t.Fatalf("no PUBACK %d", want)
		}
	}
}

// A connection that ends in the middle of a PUBLISH, then a new one:
// LeaveShared, on the new connection, returns as soon as the broker
// answered and what came before was handled, not when its context ends
// (the PUBLISH cut short is never handled; the new connection's are).
func TestLeaveSharedAfterACutPublish(t *testing.T) {
	fb := newFakeBroker(t,
		func(c net.Conn, r *packetReader) {
			<-r.subs
			// A QoS 1 PUBLISH's fixed header, a few bytes of it, and the end.
			_, _ = c.Write([]byte{0x32, 100, 0, 3, 's', '/'})
			_ = c.Close()
		},
		func(_ net.Conn, r *packetReader) { <-r.subs })
	c := dialNoWait(t, fb.URL(), mqtt.Config{QoS: 1, StatusTopic: "-", MinBackoff: 10 * time.Millisecond})
	ex := executor.New(executor.Options{Workers: 1})
	_, err := ex.NewOwner("n", nil).Subscribe(c, "$share/g/s/#", func(ctx context.Context, _ subscribers.Message) {})
	require.NoError(t, err)
	startExecutor(t, ex)
	eventually(t, "a reconnection", func() bool { return c.Stats().Reconnects == 1 && c.Connected() })
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	require.NoError(t, c.LeaveShared(ctx))
}

// A PUBLISH without a topic name, and without a Topic Alias (the client
// allows the broker none), breaks MQTT 5 (3.3.2.1, 4.7.3): from a faulty
// broker it reaches no subscription, not even "#". It is acknowledged,
// so that the broker does not send it again, and counted as unrouted;
// the connection and the messages after it go on.
func TestEmptyTopicFromBroker(t *testing.T) {
	fb := newFakeBroker(t, func(c net.Conn, r *packetReader) {
		<-r.subs
		for _, p := range []packets.Publish{
			{Topic: "", QoS: 1, PacketID: 7, Retain: true, Payload: []byte("nowhere")},
			{Topic: "a/b", QoS: 1, PacketID: 8, Payload: []byte("ab")},
		} {
			p.Properties = &packets.Properties{}
			_, _ = p.WriteTo(c)
		}
	})
	c := dial(t, fb.URL(), mqtt.Config{QoS: 1, StatusTopic: "-"})
	ex := executor.New(executor.Options{Workers: 1})
	rec := newRecorder()
	_, err := ex.NewOwner("n", nil).Subscribe(c, "#", rec.add)
	require.NoError(t, err)
	startExecutor(t, ex)
	for _, want := range []uint16{7, 8} {
		select {
		case id := <-fb.acks:
			require.Equal(t, want, id)
		case <-time.After(waitFor):
			t.Fatalf("no PUBACK %d", want)
		}
	}
	// Both were handed over, in order, before their acknowledgements.
	msgs := rec.waitCount(t, 1)
	require.Len(t, msgs, 1)
	require.Equal(t, "a/b", msgs[0].Topic)
	st := c.Stats()
	require.EqualValues(t, 1, st.Unrouted)
	require.EqualValues(t, 1, st.Delivered)
	require.Zero(t, st.ConnectionLosses)
}
