package mqtt_test

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/internal/mqtt/broker"
	"github.com/robotexec/robotexec/internal/mqtttest"
	"github.com/robotexec/robotexec/subscribers"
)

// A payload over the maximum (1 MiB by default) is dropped and counted on
// the client and on each subscription it was meant for; the messages
// around it still arrive.
func TestPayloadOverMaximum(t *testing.T) {
	forEachBroker(t, mqtttest.MosquittoOptions{}, func(t *testing.T, b mqtttest.Broker) {
		for _, tc := range []struct {
			name string
			max  int
			size int
		}{
			{"default 1 MiB", 0, 1<<20 + 1},
			{"configured 1 KiB", 1024, 1025},
		} {
			t.Run(tc.name, func(t *testing.T) {
				c := dial(t, b.URL(), mqtt.Config{QoS: 1, MaxPayload: tc.max})
				ex := executor.New(executor.Options{Workers: 1})
				o := ex.NewOwner("n", nil)
				r1, r2 := newRecorder(), newRecorder()
				s1, err := o.Subscribe(c, "big/+", r1.add)
				require.NoError(t, err)
				s2, err := o.Subscribe(c, "big/#", r2.add)
				require.NoError(t, err)
				startExecutor(t, ex)

				pub := rawClient(t, b.URL())
				limit := tc.max
				if limit == 0 {
					limit = mqtt.DefaultMaxPayload
				}
				publish(t, pub, "big/a", 1, false, "small")
				publish(t, pub, "big/a", 1, false, strings.Repeat("x", tc.size))
				publish(t, pub, "big/a", 1, false, strings.Repeat("y", limit)) // exactly the maximum passes
				publish(t, pub, "big/a", 1, false, "last")
				for _, r := range []*recorder{r1, r2} {
					msgs := r.waitCount(t, 3)
					require.Equal(t, "small", string(msgs[0].Payload))
					require.Len(t, msgs[1].Payload, limit)
					require.Equal(t, "last", string(msgs[2].Payload))
				}
				require.EqualValues(t, 1, s1.Stats().Dropped[subscribers.TooLarge])
				require.EqualValues(t, 1, s2.Stats().Dropped[subscribers.TooLarge])
				// One copy for each subscription (mosquitto), or one for
				// both (the embedded broker).
				n := c.Stats().Dropped[subscribers.TooLarge]
				require.True(t, n == 1 || n == 2, "the client dropped %d copies", n)
			})
		}
	})
}

// A malformed topic filter is an error at registration that names the
// filter, from the executor and from the client itself.
func TestMalformedFilter(t *testing.T) {
	b := mqtttest.Embedded(t, broker.Config{})
	c := dial(t, b.URL(), mqtt.Config{})
	ex := executor.New(executor.Options{Workers: 1})
	o := ex.NewOwner("n", nil)
	for _, f := range []string{"a/#/b", "sensors/+x", "", "$share/g", "$share//x", "$share/g+/x", "$share/g/"} {
		_, err := o.Subscribe(c, f, func(ctx context.Context, _ subscribers.Message) {})
		require.Error(t, err, "filter %q", f)
		require.Contains(t, err.Error(), fmt.Sprintf("%q", f))

		_, err = bus.RouteFilter(f)
		require.ErrorContains(t, err, fmt.Sprintf("%q", f))
	}
	inner, err := bus.RouteFilter("$share/g/a/+")
	require.NoError(t, err)
	require.Equal(t, "a/+", inner)

	_, err = c.Publisher("a/+", bus.WithQoS(0))
	require.ErrorContains(t, err, `"a/+"`)
	_, err = c.Publisher("a", bus.WithQoS(3))
	require.ErrorContains(t, err, "QoS 3")
}

// An invalid configuration fails Dial, naming every problem and never the
// password.
func TestDialInvalidConfig(t *testing.T) {
	_, err := mqtt.Dial(mqtt.Config{Broker: "http://u:hunter2@host:1", QoS: 3, TLS: mqtt.TLSFiles{Cert: "c.pem"}})
	require.Error(t, err)
	for _, want := range []string{`scheme "http"`, "QoS 3", "cert and key"} {
		require.ErrorContains(t, err, want)
	}
	require.NotContains(t, err.Error(), "hunter2")
	_, err = mqtt.Dial(mqtt.Config{Broker: "tcp://u:hunter2@host:1:bad:port%zz"})
	require.Error(t, err)
	require.NotContains(t, err.Error(), "hunter2")
}

// With no broker listening, the client keeps trying and says so, with the
// broker's URL and never the password; when the broker appears it
// connects, subscribes what was attached meanwhile, and works.
func TestConnectionRefusedThenBrokerAppears(t *testing.T) {
	t.Parallel()
	const password = "pw-hunter2"
	port := mqtttest.FreePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	url := "tcp://" + addr
	logs := newLogSink(t)
	c := dialNoWait(t, url, mqtt.Config{QoS: 1, Username: "alice", Password: password, Logger: logs.logger(),
		MinBackoff: 50 * time.Millisecond, MaxBackoff: 200 * time.Millisecond})

	ex := executor.New(executor.Options{Workers: 1})
	rec := newRecorder()
	_, err := ex.NewOwner("n", nil).Subscribe(c, "late/#", rec.add)
	require.NoError(t, err)
	startExecutor(t, ex)

	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	err = c.WaitConnected(ctx)
	require.Error(t, err)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorIs(t, err, syscall.ECONNREFUSED)
	require.ErrorContains(t, err, url)
	require.NotContains(t, err.Error(), password)
	require.ErrorContains(t, c.LastError(), url)
	require.False(t, c.Connected())
	require.Positive(t, c.Stats().ConnectFailures)
	require.Contains(t, logs.String(), "waiting for broker")
	require.Contains(t, logs.String(), url)
	require.NotContains(t, logs.String(), password)

	// The broker appears on that port.
	b, err := broker.New(broker.Config{Listen: addr, Users: everyTopic(map[string]string{"alice": password}), Logger: logs.logger()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	ctx, cancel = context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	require.NoError(t, c.WaitConnected(ctx))
	require.NoError(t, c.LastError())
	publish(t, rawClient(t, url, func(o *paho.ClientOptions) { o.SetUsername("alice").SetPassword(password) }), "late/x", 1, false, "hello")
	require.Equal(t, "hello", string(rec.waitCount(t, 1)[0].Payload))
	require.NotContains(t, logs.String(), password)
}

// Bad credentials are reported with the broker's URL and the user, never
// the password, by mosquitto (password file made by mosquitto_passwd) and
// by the embedded broker; good ones connect.
func TestBadCredentials(t *testing.T) {
	users := map[string]string{"alice": "s3cret"}
	forEachBroker(t, mqtttest.MosquittoOptions{Users: users}, func(t *testing.T, b mqtttest.Broker) {
		const wrong = "wrong-hunter2"
		for _, tc := range []struct {
			name string
			cfg  mqtt.Config
			url  string
		}{
			{"fields", mqtt.Config{Username: "alice", Password: wrong}, b.URL()},
			{"in URL", mqtt.Config{}, strings.Replace(b.URL(), "tcp://", "tcp://alice:"+wrong+"@", 1)},
			{"anonymous", mqtt.Config{}, b.URL()},
		} {
			t.Run(tc.name, func(t *testing.T) {
				logs := newLogSink(t)
				tc.cfg.Logger = logs.logger()
				c := dialNoWait(t, tc.url, tc.cfg)
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				defer cancel()
				err := c.WaitConnected(ctx)
				require.Error(t, err)
				require.ErrorIs(t, err, mqtt.ErrNotAuthorized)
				require.ErrorContains(t, err, b.URL())
				if tc.name != "anonymous" {
					require.ErrorContains(t, err, `user "alice"`)
				}
				require.NotContains(t, err.Error(), wrong)
				eventually(t, "a logged failure", func() bool { return strings.Contains(logs.String(), "refused the credentials") })
				require.Contains(t, logs.String(), b.URL())
				require.NotContains(t, logs.String(), wrong)
				require.Equal(t, b.URL(), c.Broker())
			})
		}
		t.Run("good", func(t *testing.T) {
			dial(t, b.URL(), mqtt.Config{Username: "alice", Password: "s3cret"})
		})
	})
}
