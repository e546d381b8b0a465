package broker_test

import (
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/subscribers/mqtt/broker"
)

// inbox collects the messages a paho client receives.
type inbox chan paho.Message

func (in inbox) handle(_ paho.Client, m paho.Message) { in <- m }

// next returns the next message, failing after 10 seconds.
func (in inbox) next(t *testing.T) paho.Message {
	t.Helper()
	select {
	case m := <-in:
		return m
	case <-time.After(10 * time.Second):
		t.Fatal("no message in 10 s")
		return nil
	}
}

// wait completes a paho token, requiring success within 10 seconds.
func wait(t *testing.T, tok paho.Token) {
	t.Helper()
	require.True(t, tok.WaitTimeout(10*time.Second), "no answer from the broker")
	require.NoError(t, tok.Error())
}

// The subscriptions that Config.NoLocal names do not get their client's
// own publications, live or retained; other clients' subscriptions do,
// and so do the client's shared subscriptions, which never are no-local.
func TestNoLocal(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	b, err := broker.New(broker.Config{Listen: "127.0.0.1:0", Logger: quiet, NoLocal: func(clientID, filter string) bool {
		mu.Lock()
		asked = append(asked, clientID+" "+filter)
		mu.Unlock()
		return clientID == "self"
	}})
	require.NoError(t, err)
	defer b.Close()
	self, err := pahoClient(t, b, "self", "", "")
	require.NoError(t, err)
	other, err := pahoClient(t, b, "other", "", "")
	require.NoError(t, err)
	selfIn, otherIn := make(inbox, 16), make(inbox, 16)
	wait(t, self.Subscribe("t/#", 1, selfIn.handle))
	wait(t, self.Subscribe("$share/g/s/#", 1, selfIn.handle))
	wait(t, other.Subscribe("t/#", 1, otherIn.handle))

	// The broker handles a client's publications in order, each sent to
	// all its subscribers before the next: had self got t/own back, it
	// would have come before s/own.
	wait(t, self.Publish("t/own", 1, false, "mine"))
	wait(t, self.Publish("s/own", 1, false, "mine"))
	require.Equal(t, "s/own", selfIn.next(t).Topic(), "self got its own publication back, or not that of its shared subscription")
	require.Equal(t, "t/own", otherIn.next(t).Topic())
	wait(t, other.Publish("t/other", 1, false, "theirs"))
	require.Equal(t, "t/other", selfIn.next(t).Topic())
	require.Equal(t, "t/other", otherIn.next(t).Topic())

	// Retained: the broker sends the retained messages of a filter as
	// the client subscribes, before it handles the client's next packet.
	wait(t, self.Publish("r/own", 1, true, "mine"))
	wait(t, self.Subscribe("r/#", 1, selfIn.handle))
	wait(t, self.Publish("s/sync", 1, false, "mine"))
	require.Equal(t, "s/sync", selfIn.next(t).Topic(), "self got its own retained message")
	wait(t, other.Subscribe("r/#", 1, otherIn.handle))
	m := otherIn.next(t)
	require.Equal(t, "r/own", m.Topic())
	require.True(t, m.Retained())

	mu.Lock()
	defer mu.Unlock()
	require.Contains(t, asked, "self t/#")
	require.Contains(t, asked, "other t/#")
	require.Contains(t, asked, "self r/#")
	for _, a := range asked {
		require.NotContains(t, a, "$share", "asked about a shared subscription")
	}
}
