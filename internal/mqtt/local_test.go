package mqtt_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/internal/mqtt/broker"
	"github.com/robotexec/robotexec/internal/mqtttest"
	"github.com/robotexec/robotexec/internal/trace"
	"github.com/robotexec/robotexec/internal/tracecheck"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// localWorld is a client whose router is in-process, on a real broker
// (the embedded one or mosquitto), which the client asks not to send its
// own publications back (No Local). Its executor records every scheduling
// step, and its subscriptions record what they get.
type localWorld struct {
	t       *testing.T
	broker  string // "embedded" or "mosquitto"
	clean   bool   // the client's session
	url     string // the broker's, or a proxy's
	proxy   *mqtttest.Proxy
	c       *mqtt.Client
	ex      *executor.Executor
	trace   *tracecheck.Recorder
	msgs    *tracecheck.Messages
	subs    map[string]*subscribers.Subscription
	foreign paho.Client
}

// forEachLocalBroker runs f on an in-process client of the embedded broker
// and of mosquitto, with a persistent and with a clean session; with
// proxied, the client reaches the broker through a proxy that the test may
// cut.
func forEachLocalBroker(t *testing.T, proxied bool, f func(w *localWorld)) {
	for _, name := range []string{"embedded", "mosquitto"} {
		for _, session := range []string{"persistent", "clean"} {
			t.Run(name+"/"+session, func(t *testing.T) {
				t.Parallel()
				f(newLocalWorld(t, name, proxied, session == "clean"))
			})
		}
	}
}

func newLocalWorld(t *testing.T, name string, proxied, clean bool) *localWorld {
	id := clientID(t, "local")
	cfg := mqtt.Config{ClientID: id, QoS: 1, InProcess: true, StatusTopic: "-", CleanSession: clean}
	var b mqtttest.Broker
	if name == "embedded" {
		b = mqtttest.Embedded(t, broker.Config{})
	} else {
		b = mqtttest.Mosquitto(t, mqtttest.MosquittoOptions{})
	}
	w := &localWorld{t: t, broker: name, clean: clean, url: b.URL(), trace: &tracecheck.Recorder{}, msgs: &tracecheck.Messages{},
		subs: map[string]*subscribers.Subscription{}}
	if proxied {
		w.proxy = mqtttest.NewProxy(t, b.Addr())
		w.url = w.proxy.URL()
	}
	w.c = dial(t, w.url, cfg)
	w.ex = executor.New(executor.Options{Workers: 2, Observer: w.trace})
	w.foreign = rawClient(t, b.URL())
	return w
}

// subscribe adds a subscription named name that records what it gets.
func (w *localWorld) subscribe(name, filter string) { w.subscribeSlow(name, filter, 100000, 0) }

// subscribeSlow adds a subscription with the block policy and a queue of
// depth whose callback takes work.
func (w *localWorld) subscribeSlow(name, filter string, depth int, work time.Duration) {
	require.NoError(w.t, w.msgs.Subscribe(name, filter))
	s, err := w.ex.NewOwner(name, nil).Subscribe(w.c, filter, func(ctx context.Context, m subscribers.Message) {
		w.msgs.Delivered(name, m.Payload)
		time.Sleep(work)
	}, executor.Depth(depth), executor.Overflow(subscribers.Block))
	require.NoError(w.t, err)
	w.subs[name] = s
}

// fence makes sure that whatever the broker would send the client for
// what was published so far has arrived: the client's last publication is
// acknowledged, so the broker has routed all of them; then a foreign
// message on every topic, routed after them, reaches every subscription.
func (w *localWorld) fence(topics []string) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	require.NoError(w.t, w.c.PublishWait(ctx, subscribers.Message{Topic: "fence/own", QoS: 1}))
	for _, topic := range topics {
		payload := "fence " + topic
		w.msgs.Published("fence", topic, []byte(payload))
		publish(w.t, w.foreign, topic, 1, false, payload)
	}
	w.waitExpected()
}

// waitExpected waits until every subscription has received as many
// messages as were published to it.
func (w *localWorld) waitExpected() {
	w.t.Helper()
	ok := false
	defer func() {
		if !ok {
			for name := range w.subs {
				w.t.Logf("%s: %d of %d; %+v", name, w.msgs.Count(name), w.msgs.Expected(name), w.subs[name].Stats())
			}
			w.t.Logf("client %+v", w.c.Stats())
		}
	}()
	eventually(w.t, "every expected delivery", func() bool {
		for name := range w.subs {
			if w.msgs.Count(name) < w.msgs.Expected(name) {
				return false
			}
		}
		return true
	})
	ok = true
}

// check stops the executor and checks the trace and the deliveries.
func (w *localWorld) check(stop func()) {
	w.t.Helper()
	stop()
	require.NoError(w.t, w.msgs.Check())
	require.NoError(w.t, tracecheck.Check(w.trace.Steps(), tracecheck.Model{Workers: 2, Drained: true, Batch: executor.DefaultBatch}))
}

// TestInProcessExactlyOnce runs random workloads on an in-process client:
// nodes publish from timers (with the executor's hand-off and muting) and
// from outside callbacks, at QoS 0 and 1, on topics that subscriptions of
// the same process match with overlapping filters and a shared
// subscription, while another client publishes on the same topics, some
// payloads equal to the nodes'. Each subscription must get each message
// exactly once and each publisher's messages in order: the broker sends
// the client none of its own publications on non-shared subscriptions,
// and each message it sends goes to the subscriptions whose identifiers
// it carries.
func TestInProcessExactlyOnce(t *testing.T) {
	for _, name := range []string{"embedded", "mosquitto"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for seed := range uint64(3) {
				t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
					exactlyOnceWorkload(newLocalWorld(t, name, false, false), rand.New(rand.NewPCG(seed, 42)))
				})
			}
		})
	}
}

func exactlyOnceWorkload(w *localWorld, r *rand.Rand) {
	topics := []string{"w/0", "w/1", "w/2", "w/3", "v/2"}
	// A shared subscription on a topic that non-shared ones of the same
	// client match too: the subscription identifiers tell the broker's
	// copies apart.
	filters := []string{"w/+", "w/0", "w/#", "w/1", "$share/g/v/2", "w/3", "$share/h/w/2"}
	for i, f := range filters {
		w.subscribe(fmt.Sprintf("s%d", i), f)
	}
	// A slow subscription with a short queue: the nodes that publish to
	// it are muted until it drains (docs/design.md, Resources), the
	// intake waits for it.
	w.subscribeSlow("slow", "w/0", 4, 2*time.Millisecond)
	const perPublisher = 150
	var published atomic.Int64
	errs := make(chan error, 3*perPublisher)
	for p := range 3 {
		name := fmt.Sprintf("node%d", p)
		o := w.ex.NewOwner(name, nil)
		qos := byte(r.IntN(2))
		pubs := map[string]*subscribers.Publisher{}
		for _, topic := range topics {
			pub, err := w.c.Publisher(topic, bus.WithQoS(qos))
			require.NoError(w.t, err)
			pubs[topic] = pub
		}
		seq := 0
		picks := make([]string, perPublisher)
		for i := range picks {
			picks[i] = topics[r.IntN(len(topics))]
		}
		var tm *timers.Timer
		tm, err := o.Timer(time.Duration(100+r.IntN(400))*time.Microsecond, func(ctx context.Context, _ timers.Event) {
			if seq == perPublisher {
				tm.Cancel()
				return
			}
			topic := picks[seq]
			seq++
			payload := fmt.Sprintf("%s-%d", name, seq)
			if p == 0 && seq%3 == 0 {
				topic, payload = "w/3", "equal"
			}
			w.msgs.Published(name, topic, []byte(payload))
			if err := pubs[topic].Publish(ctx, []byte(payload)); err != nil {
				errs <- err
			}
			published.Add(1)
		})
		require.NoError(w.t, err)
	}
	stop := runExecutor(w.t, w.ex)

	// A publisher outside any callback, and the foreign client, with
	// payloads equal to node0's on w/3.
	outside, err := w.c.Publisher("w/1", bus.WithQoS(1))
	require.NoError(w.t, err)
	for i := range perPublisher {
		payload := fmt.Sprint("outside-", i)
		w.msgs.Published("outside", "w/1", []byte(payload))
		require.NoError(w.t, outside.Publish(context.Background(), []byte(payload)))
		topic, fp := topics[r.IntN(len(topics))], fmt.Sprint("foreign-", i)
		if i%4 == 0 {
			topic, fp = "w/3", "equal"
		}
		w.msgs.Published("foreign", topic, []byte(fp))
		w.foreign.Publish(topic, 1, false, fp)
	}
	eventually(w.t, "the nodes' publications", func() bool { return published.Load() == 3*perPublisher })
	close(errs)
	for err := range errs {
		require.NoError(w.t, err)
	}
	w.fence(topics)
	w.check(stop)

	mutes := 0
	for _, s := range w.trace.Steps() {
		if s.Op == trace.Mute {
			mutes++
		}
	}
	require.Positive(w.t, mutes, "publishers into the slow subscription were muted")

}

// TestLocalFirstLostConnection publishes at QoS 0 while the proxy drops
// what the broker sends, then cuts the connection, three times over. Then
// another client publishes every payload again on the same topic: each
// must be delivered twice, once as the node's (locally, whatever became
// of its copy at the broker) and once as the other client's, never once
// nor three times: nothing is matched by payload.
func TestLocalFirstLostConnection(t *testing.T) {
	forEachLocalBroker(t, true, func(w *localWorld) {
		w.subscribe("s", "loss/+")
		stop := runExecutor(w.t, w.ex)
		pub, err := w.c.Router().Publisher("loss/a")
		require.NoError(t, err)
		n := 0
		send := func(count int) {
			for range count {
				payload := fmt.Sprint("p-", n)
				n++
				w.msgs.Published("node", "loss/a", []byte(payload))
				// QoS 0: lost at the broker while not connected.
				_, _ = pub.PublishMessage(context.Background(), subscribers.Message{Payload: []byte(payload)})
			}
		}
		for phase := range 3 {
			ctx, cancel := context.WithTimeout(context.Background(), waitFor)
			require.NoError(t, w.c.WaitConnected(ctx))
			cancel()
			send(200)
			if phase < 2 {
				w.proxy.Mute()
				send(50)
				eventually(t, "the publications handed over", func() bool { return w.c.Stats().Outbound == 0 })
				w.proxy.Cut()
				eventually(t, "a reconnection", func() bool { return w.c.Stats().Reconnects > uint64(phase) })
			}
		}
		for i := range n {
			payload := fmt.Sprint("p-", i)
			w.msgs.Published("foreign", "loss/a", []byte(payload))
			w.foreign.Publish("loss/a", 1, false, payload)
		}
		w.fence([]string{"loss/a"})
		w.check(stop)
		require.GreaterOrEqual(t, w.c.Stats().Reconnects, uint64(2))
	})
}
