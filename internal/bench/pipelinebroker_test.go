package bench_test

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/bench"
	"github.com/robotexec/robotexec/internal/mqtt/broker"
	"github.com/robotexec/robotexec/internal/mqtttest"
)

// viaBrokers runs f on the embedded broker and on mosquitto.
func viaBrokers(t *testing.T, f func(t *testing.T, b mqtttest.Broker)) {
	t.Run("embedded", func(t *testing.T) { f(t, mqtttest.Embedded(t, broker.Config{})) })
	t.Run("mosquitto", func(t *testing.T) { f(t, mqtttest.Mosquitto(t, mqtttest.MosquittoOptions{Persistence: true})) })
}

func TestPipelineViaBroker(t *testing.T) { viaBrokers(t, testPipelineViaBroker) }

func testPipelineViaBroker(t *testing.T, mq mqtttest.Broker) {
	for _, inProcess := range []bool{true, false} {
		c, err := bench.PipelineViaBroker(mq.URL(), 2, inProcess, 100*time.Millisecond)
		require.NoError(t, err, "in_process %v", inProcess)
		require.Positive(t, c.Messages)
		require.Positive(t, c.CPU)
		require.Positive(t, c.CPUPerMessage())
		hops := float64(bench.PipelineStages + 1)
		if inProcess {
			// Each hop's copy from the broker (an echo) today; none once
			// the client asks the broker not to send them.
			require.LessOrEqual(t, c.BrokerSentPerMessage(), hops)
		} else {
			require.Equal(t, hops, c.BrokerSentPerMessage(), "every hop through the broker, none counted twice: %+v", c)
		}
	}
}

// TestPipelineViaBrokerDuplicate checks that a message of the last topic
// received twice fails the run: another client publishes a copy of the
// first one it sees there.
func TestPipelineViaBrokerDuplicate(t *testing.T) { viaBrokers(t, testPipelineViaBrokerDuplicate) }

func testPipelineViaBrokerDuplicate(t *testing.T, mq mqtttest.Broker) {
	intruder := paho.NewClient(paho.NewClientOptions().AddBroker(mq.URL()).SetClientID("intruder").SetAutoReconnect(false))
	tok := intruder.Connect()
	require.True(t, tok.WaitTimeout(5*time.Second))
	require.NoError(t, tok.Error())
	defer intruder.Disconnect(0)
	var copied atomic.Bool
	tok = intruder.Subscribe("bench/pipe/#", 1, func(cl paho.Client, m paho.Message) {
		if strings.HasSuffix(m.Topic(), "/5") && copied.CompareAndSwap(false, true) {
			cl.Publish(m.Topic(), 1, false, m.Payload())
		}
	})
	require.True(t, tok.WaitTimeout(5*time.Second))
	require.NoError(t, tok.Error())

	_, err := bench.PipelineViaBroker(mq.URL(), 2, true, 50*time.Millisecond)
	require.True(t, copied.Load())
	require.ErrorContains(t, err, "bench: pipeline via broker (in_process true): messages delivered twice: of ")
	require.ErrorContains(t, err, "(1 twice, 0 stray), the outside subscriber")
	require.ErrorContains(t, err, "(1 twice, 0 stray)")
}
