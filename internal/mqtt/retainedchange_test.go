package mqtt_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/internal/mqtttest"
	"github.com/robotexec/robotexec/subscribers"
)

// mqttTestBackoff is the reconnection backoff of the tests that
// reconnect on purpose.
const mqttTestBackoff = 50 * time.Millisecond

// retainedCase is a client behind a proxy, with subscriptions to one
// topic, whose retained message another client publishes.
type retainedCase struct {
	t     *testing.T
	topic string
	pub   func(payload string, qos byte, retained bool)
	proxy *mqtttest.Proxy
	c     *mqtt.Client
	ex    *executor.Executor
	recs  []*recorder
}

func newRetainedCase(t *testing.T, b mqtttest.Broker, cfg mqtt.Config, connected bool) *retainedCase {
	rc := &retainedCase{t: t, topic: "rc-" + clientID(t, "t") + "/t", proxy: mqtttest.NewProxy(t, b.Addr())}
	other := rawClient(t, b.URL())
	rc.pub = func(p string, qos byte, retained bool) {
		publish(t, other, rc.topic, qos, retained, p)
		// The embedded broker acknowledges a publication before it sends
		// it on, and a subscription made meanwhile gets it twice, retained
		// and live; the broker handles the next publication of other
		// once it is done with this one.
		publish(t, other, "sync/"+rc.topic, 1, false, "")
	}
	t.Cleanup(func() { rc.pub("", 1, true) })
	cfg.InProcess, cfg.StatusTopic = true, "-"
	if connected {
		rc.c = dial(t, rc.proxy.URL(), cfg)
	} else {
		rc.proxy.Refuse(true)
		rc.c = dialNoWait(t, rc.proxy.URL(), cfg)
	}
	rc.ex = executor.New(executor.Options{Workers: 2})
	return rc
}

// attach attaches n subscriptions to filter.
func (rc *retainedCase) attach(filter string, n int) {
	for range n {
		rec := newRecorder()
		rc.recs = append(rc.recs, rec)
		_, err := rc.ex.NewOwner(fmt.Sprintf("s%d", len(rc.recs)), nil).Subscribe(rc.c, filter, rec.add, executor.Depth(100))
		require.NoError(rc.t, err)
	}
}

// reconnect cuts the connection and, once the client knows, runs away
// (the broker is unreachable meanwhile), then lets it connect again.
func (rc *retainedCase) reconnect(away func()) {
	rc.proxy.Refuse(true)
	rc.proxy.Cut()
	eventually(rc.t, "the client sees the connection lost", func() bool { return !rc.c.Connected() })
	away()
	rc.proxy.Refuse(false)
	eventually(rc.t, "a reconnection", func() bool { return rc.c.Connected() })
}

// finish publishes a live "end" and, once every subscription had it,
// requires that each had exactly want then.
func (rc *retainedCase) finish(want ...string) {
	rc.pub("end", 1, false)
	want = append(want, "end")
	for i, rec := range rc.recs {
		ms := rec.waitUntil(rc.t, "the end", func(ms []subscribers.Message) bool {
			return len(ms) > 0 && string(ms[len(ms)-1].Payload) == "end"
		})
		var got, flags []string
		for _, m := range ms {
			got = append(got, string(m.Payload))
			flags = append(flags, fmt.Sprintf("%s retained=%v", m.Payload, m.Retained))
		}
		require.Equal(rc.t, want, got, "subscription %d: %v", i+1, flags)
	}
}

// TestRetainedBeforeConnecting: subscriptions attached before the first
// connection, as robotexec run attaches its nodes', two of one filter
// and one of another: each gets the retained message once.
func TestRetainedBeforeConnecting(t *testing.T) {
	forEachBroker(t, mqtttest.MosquittoOptions{}, func(t *testing.T, b mqtttest.Broker) {
		for _, protocol := range []string{mqtt.Protocol5, mqtt.Protocol311} {
			t.Run(protocol, func(t *testing.T) {
				rc := newRetainedCase(t, b, mqtt.Config{QoS: 1, Protocol: protocol}, false)
				rc.pub("kept", 1, true)
				rc.attach(rc.topic, 2)
				rc.attach(rc.topic[:len(rc.topic)-2]+"/+", 1)
				startExecutor(t, rc.ex)
				rc.proxy.Refuse(false)
				eventually(t, "connected", rc.c.Connected)
				rc.finish("kept")
			})
		}
	})
}

// TestRetainedChangedWhileAway: a retained message changed while the
// client was away reaches its subscriptions when it is back, at QoS 0
// (which no broker keeps for an absent client) and 1; an unchanged one
// does not come again, nor one they had live.
func TestRetainedChangedWhileAway(t *testing.T) {
	forEachBroker(t, mqtttest.MosquittoOptions{}, func(t *testing.T, b mqtttest.Broker) {
		for _, protocol := range []string{mqtt.Protocol5, mqtt.Protocol311} {
			for _, qos := range []byte{0, 1} {
				t.Run(fmt.Sprintf("%s/qos%d", protocol, qos), func(t *testing.T) {
					rc := newRetainedCase(t, b, mqtt.Config{QoS: qos, Protocol: protocol,
						MinBackoff: mqttTestBackoff, MaxBackoff: 4 * mqttTestBackoff}, true)
					rc.pub("v1", 1, true)
					rc.attach(rc.topic, 2)
					rc.attach(rc.topic[:len(rc.topic)-2]+"/#", 1)
					startExecutor(t, rc.ex)
					for _, rec := range rc.recs {
						rec.waitCount(t, 1)
					}
					rc.reconnect(func() { rc.pub("v2", 1, true) })
					for _, rec := range rc.recs {
						rec.waitCount(t, 2)
					}
					// Live, and at QoS 0: no redelivery after the cut.
					rc.pub("v3", 0, true)
					for _, rec := range rc.recs {
						rec.waitCount(t, 3)
					}
					rc.reconnect(func() {})
					rc.finish("v1", "v2", "v3")
				})
			}
		}
	})
}
