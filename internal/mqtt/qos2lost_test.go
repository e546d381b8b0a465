package mqtt_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/subscribers"
)

// A QoS 2 publication that the broker received (PUBREC), then the
// connection ends before PUBCOMP, and the broker lost the session
// (Session Present 0 on the next connection): the broker had it, so the
// client does not send it again (it would be delivered twice), and the
// publication succeeded.
func TestQoS2ReceivedNotSentAgain(t *testing.T) {
	second := make(chan string, 16)
	fb := newFakeBroker(t,
		func(c net.Conn, r *packetReader) {
			require.Equal(t, "q/first", <-r.pubs) // answered with PUBREC
			time.Sleep(50 * time.Millisecond)     // the PUBREC read, the PUBREL unanswered
			_ = c.Close()
		},
		func(_ net.Conn, r *packetReader) {
			for {
				select {
				case topic := <-r.pubs:
					second <- topic
				case <-r.gone:
					return
				}
			}
		})
	fb.holdPubcomp.Store(true)
	c := dialNoWait(t, fb.URL(), mqtt.Config{QoS: 1, StatusTopic: "-", MinBackoff: 10 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	require.NoError(t, c.PublishWait(ctx, subscribers.Message{Topic: "q/first", QoS: 2}))
	eventually(t, "a reconnection", func() bool { return c.Stats().Reconnects == 1 && c.Connected() })
	require.NoError(t, c.PublishWait(ctx, subscribers.Message{Topic: "q/after", QoS: 1}))
	require.Equal(t, "q/after", <-second, "the first PUBLISH of the second connection")
}
