package mqtt_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/internal/mqtt/broker"
	"github.com/robotexec/robotexec/subscribers"
)

// TestRetainedOfTwoFilters: a short-lived client (as robotexec's
// commands dial one) that subscribes to two filters one after the other
// gets the retained messages of both, QoS 0 and QoS 1, from the embedded
// broker, every time. The second SUBSCRIBE goes out while the client
// acknowledges the first filter's retained QoS 1 messages, and often has
// the identifier of one of them; mochi took the two for the same and
// refused the subscription (with 0x91, which paho reports as granted):
// without the broker's packetIDHook about 3 rounds in 4 missed the
// statuses (149 of 200). See TestSubscribePacketIDOfUnackedMessage of
// package broker.
func TestRetainedOfTwoFilters(t *testing.T) {
	const instances = 3
	rounds := 200
	if testing.Short() {
		rounds = 20
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	b, err := broker.New(broker.Config{Listen: "127.0.0.1:0", Logger: quiet})
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })

	// The instances: each keeps its graph (QoS 1, retained) and says
	// online on its status topic (QoS 0, retained).
	want := map[string]string{}
	for i := range instances {
		id := fmt.Sprintf("inst-%d", i)
		cfg := mqtt.Config{ClientID: id, QoS: 1, Logger: quiet}
		if i == 0 {
			cfg.InProcess, cfg.Audience = true, b.AudienceOf(id)
		}
		c := dial(t, b.URL(), cfg)
		graph := "robotexec/" + id + "/graph"
		require.NoError(t, c.Keep(graph, []byte("graph of "+id)))
		want[graph] = "graph of " + id
		want["robotexec/"+id+"/status"] = mqtt.StatusOnline
	}
	// Wait until the broker holds them all. (Topic by topic: mochi
	// v2.7.9 reads its index unlocked for a filter with wildcards, a data
	// race with the storing of a retained message.)
	eventually(t, "the retained messages at the broker", func() bool {
		for topic := range want {
			id := strings.Split(topic, "/")[1]
			if len(b.AudienceOf(id).(bus.RetainKeeper).OwnRetained(topic)) == 0 {
				return false
			}
		}
		return true
	})

	failed := 0
	for r := range rounds {
		got, stats := twoFilters(t, b.URL(), fmt.Sprintf("cli-%d", r), len(want))
		missing := []string{}
		for topic, p := range want {
			if got[topic] != p {
				missing = append(missing, topic)
			}
		}
		if len(missing) > 0 {
			failed++
			t.Logf("round %d: missing %v; client stats %+v", r, missing, stats)
		}
	}
	if failed > 0 {
		t.Errorf("%d of %d rounds missed retained messages", failed, rounds)
	}
}

// twoFilters dials a client as robotexec's commands do, subscribes it to
// the graphs, then the statuses, through an executor, and returns the
// retained messages it got by topic, once it has n of them or after a
// second.
func twoFilters(t *testing.T, url, id string, n int) (map[string]string, mqtt.Stats) {
	t.Helper()
	c, err := mqtt.Dial(mqtt.Config{Broker: url, ClientID: id, QoS: 1, CleanSession: true, StatusTopic: "-",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	require.NoError(t, c.WaitConnected(ctx))

	var mu sync.Mutex
	got := map[string]string{}
	full := make(chan struct{})
	add := func(ctx context.Context, m subscribers.Message) {
		mu.Lock()
		defer mu.Unlock()
		got[m.Topic] = string(m.Payload)
		if len(got) == n {
			close(full)
		}
	}
	ex := executor.New(executor.Options{Workers: 1, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	owner := ex.NewOwner("x", nil)
	for _, f := range []string{"robotexec/+/graph", "robotexec/+/status"} {
		_, err := owner.Subscribe(c, f, add, executor.Depth(1<<14), executor.Overflow(subscribers.Block))
		require.NoError(t, err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ex.Run(runCtx) }()
	select {
	case <-full:
	case <-time.After(time.Second):
	}
	stop()
	require.NoError(t, <-done)
	mu.Lock()
	defer mu.Unlock()
	out := make(map[string]string, len(got))
	for k, v := range got {
		out[k] = v
	}
	return out, c.Stats()
}
