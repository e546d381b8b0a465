package mqtt_test

import (
	"net"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/packets"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/mqtt"
)

// A broker that leaves a reconnected client's SUBSCRIBE unanswered: the
// client ends that connection once the connect timeout passed, instead
// of keeping it without the subscription, and the next connection
// renews it; a message on the third connection reaches the
// subscription.
func TestUnansweredRenewalReconnects(t *testing.T) {
	var fb *fakeBroker
	fb = newFakeBroker(t,
		func(c net.Conn, r *packetReader) {
			<-r.subs // the subscription, attached
			fb.holdSuback.Store(true)
			_ = c.Close()
		},
		func(_ net.Conn, r *packetReader) {
			fb.holdSuback.Store(false) // for the third connection
			<-r.gone                   // the client ends this one
		},
		func(c net.Conn, r *packetReader) {
			<-r.subs // the subscription, renewed
			pb := packets.Publish{Topic: "renew/t", Payload: []byte("after"), Properties: &packets.Properties{}}
			_, _ = pb.WriteTo(c)
		})
	subscribeThrough(t, fb, 2)
}

// A broker that leaves the SUBSCRIBE of a subscription attached while
// connected unanswered: Subscribe returns once the connect timeout
// passed, the client ends that connection, and the next one subscribes;
// a message on it reaches the subscription.
func TestUnansweredSubscribeReconnects(t *testing.T) {
	var fb *fakeBroker
	fb = newFakeBroker(t,
		func(_ net.Conn, r *packetReader) {
			fb.holdSuback.Store(false) // for the second connection
			<-r.gone                   // the client ends this one
		},
		func(c net.Conn, r *packetReader) {
			<-r.subs
			pb := packets.Publish{Topic: "renew/t", Payload: []byte("after"), Properties: &packets.Properties{}}
			_, _ = pb.WriteTo(c)
		})
	fb.holdSuback.Store(true)
	subscribeThrough(t, fb, 1)
}

// subscribeThrough subscribes to renew/# through fb with a short connect
// timeout, and checks that the message "after" arrives once the client
// has reconnected reconnects times.
func subscribeThrough(t *testing.T, fb *fakeBroker, reconnects int) {
	t.Helper()
	c := dial(t, fb.URL(), mqtt.Config{StatusTopic: "-", MinBackoff: 10 * time.Millisecond,
		ConnectTimeout: 300 * time.Millisecond})
	ex := executor.New(executor.Options{Workers: 1})
	rec := newRecorder()
	_, err := ex.NewOwner("n", nil).Subscribe(c, "renew/#", rec.add)
	require.NoError(t, err)
	startExecutor(t, ex)
	msgs := rec.waitCount(t, 1)
	require.Equal(t, "after", string(msgs[0].Payload))
	require.EqualValues(t, reconnects, c.Stats().Reconnects)
}
