package mqtt_test

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"testing"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/internal/mqtttest"
)

// TestFirstConnectionSendsQueuedOnce publishes before the first connection
// of a persistent session, in-process: the publications wait for the
// connection, the subscription of the process gets each once, directly,
// and another client each once from the broker, in order.
func TestFirstConnectionSendsQueuedOnce(t *testing.T) {
	forEachBroker(t, mqtttest.MosquittoOptions{}, func(t *testing.T, b mqtttest.Broker) {
		const n = 20
		proxy := mqtttest.NewProxy(t, b.Addr())
		proxy.Refuse(true)
		outside := make(chan string, 2*n)
		obs := rawClient(t, b.URL())
		tok := obs.Subscribe("resume/t", 1, func(_ paho.Client, m paho.Message) { outside <- string(m.Payload()) })
		require.True(t, tok.WaitTimeout(waitFor))
		c := dialNoWait(t, proxy.URL(), mqtt.Config{ClientID: clientID(t, "resume"), QoS: 1, InProcess: true, StatusTopic: "-"})

		ex := executor.New(executor.Options{Workers: 1})
		rec := newRecorder()
		_, err := ex.NewOwner("sub", nil).Subscribe(c, "resume/t", rec.add, executor.Depth(1000))
		require.NoError(t, err)
		startExecutor(t, ex)
		pub, err := c.Publisher("resume/t", bus.WithQoS(1))
		require.NoError(t, err)
		want := make([]string, 0, n+1)
		for i := range n {
			require.NoError(t, pub.Publish(context.Background(), fmt.Appendf(nil, "%d", i)))
			want = append(want, fmt.Sprint(i))
		}
		want = append(want, "end")
		proxy.Refuse(false)

		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		require.NoError(t, c.WaitConnected(ctx))
		require.NoError(t, pub.Publish(context.Background(), []byte("end")))
		msgs := rec.waitCount(t, n+1)
		got := make([]string, len(msgs))
		for i, m := range msgs {
			got[i] = string(m.Payload)
		}
		require.Equal(t, want, got, "each publication once, in order, in the process")
		var out []string
		for range n + 1 {
			select {
			case p := <-outside:
				out = append(out, p)
			case <-ctx.Done():
				_ = pprof.Lookup("goroutine").WriteTo(os.Stderr, 1)
				t.Fatalf("outside: %d of %d: %v; client %+v", len(out), n+1, out, c.Stats())
			}
		}
		require.Equal(t, want, out, "each publication once, in order, outside")
		require.Zero(t, c.Stats().Received, "the broker sent none back")
		require.Equal(t, uint64(n+1), c.Stats().Published, "each publication handed over once")
	})
}
