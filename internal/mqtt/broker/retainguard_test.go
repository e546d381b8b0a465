package broker_test

import (
	"bytes"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/mochi-mqtt/server/v2/packets"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/mqtt/broker"
)

// Retained publications and subscriptions that find retained messages,
// at once on two connections: mochi's retained index raced (the race
// detector fails this test without the broker's guard), and the last
// value of each topic is the one kept.
func TestRetainedWhileSubscribing(t *testing.T) {
	b, err := broker.New(broker.Config{Listen: "127.0.0.1:0", Logger: quiet, Anonymous: broker.AnonymousAllowed})
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	const rounds, topics = 300, 20

	var pubs, subs bytes.Buffer
	for i := range rounds {
		pk := packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Publish, Retain: true},
			TopicName: fmt.Sprintf("r/%d/v", i%topics), Payload: fmt.Appendf(nil, "%d", i), ProtocolVersion: 4}
		require.NoError(t, pk.PublishEncode(&pubs))
		sk := packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Subscribe, Qos: 1}, PacketID: uint16(i + 1),
			Filters: packets.Subscriptions{{Filter: []string{"r/#", "r/+/v", fmt.Sprintf("r/%d/v", i%topics)}[i%3]}}, ProtocolVersion: 4}
		require.NoError(t, sk.SubscribeEncode(&subs))
	}
	pub := dialRaw(t, b.Addr(), 4, packets.Packet{Connect: packets.ConnectParams{Clean: true, ClientIdentifier: "retainer"}})
	sub := dialRaw(t, b.Addr(), 4, packets.Packet{Connect: packets.ConnectParams{Clean: true, ClientIdentifier: "subscriber"}})
	go func() { _, _ = io.Copy(io.Discard, sub.conn) }()

	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for _, w := range []struct {
		c    *rawClient
		data []byte
	}{{pub, pubs.Bytes()}, {sub, subs.Bytes()}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for data := w.data; len(data) > 0; {
				n := min(len(data), 512) // many small writes: packets come one by one
				if _, err := w.c.conn.Write(data[:n]); err != nil {
					errs <- err
					return
				}
				data = data[n:]
			}
		}()
	}
	wg.Wait()
	close(errs)
	require.NoError(t, <-errs)

	last := dialRaw(t, b.Addr(), 4, packets.Packet{Connect: packets.ConnectParams{Clean: true, ClientIdentifier: "last"}})
	pub.ping() // the publications are stored
	last.subscribe("r/#")
	got := make(map[string]string)
	for range topics {
		topic, payload := last.readPublish()
		got[topic] = payload
	}
	for i := range topics {
		require.Equal(t, fmt.Sprint(rounds-topics+i), got[fmt.Sprintf("r/%d/v", i)])
	}
}

// ping sends a PINGREQ and waits for the PINGRESP: the broker has
// handled what the client sent before.
func (c *rawClient) ping() {
	c.t.Helper()
	_, err := c.conn.Write([]byte{packets.Pingreq << 4, 0})
	require.NoError(c.t, err)
	fh, _ := c.read()
	require.Equal(c.t, packets.Pingresp, fh.Type)
}
