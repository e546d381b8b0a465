package bus_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/bus"
)

func TestRouterRetained(t *testing.T) {
	router := new(bus.Router)
	stamp := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	publish := func(topic, payload string, retained bool) int {
		t.Helper()
		n, err := router.Publish(context.Background(), bus.Message{Topic: topic, Payload: []byte(payload), QoS: 1, Retained: retained, Received: stamp})
		require.NoError(t, err)
		return n
	}
	late := func(filter string) []bus.Message {
		t.Helper()
		s := newSub(t, filter, bus.Options{})
		require.NoError(t, router.Attach(s))
		defer s.Close() // detaches, so that later publications count only current
		var out []bus.Message
		for {
			m, _, ok, _ := bus.Take(s)
			if !ok {
				break
			}
			out = append(out, m)
		}
		slices.SortFunc(out, func(a, b bus.Message) int { return strings.Compare(a.Topic, b.Topic) })
		return out
	}
	payloads := func(ms []bus.Message) []string {
		out := []string{}
		for _, m := range ms {
			out = append(out, m.Topic+"="+string(m.Payload))
		}
		return out
	}

	require.Zero(t, publish("r/1", "one", true), "nobody subscribes yet")
	publish("r/2", "two", true)
	publish("$SYS/up", "yes", true)
	publish("r/1", "live", false) // not retained: does not replace "one"
	publish("r/3", "gone", false)

	got := late("r/+")
	require.Equal(t, []string{"r/1=one", "r/2=two"}, payloads(got))
	for _, m := range got {
		require.True(t, m.Retained)
		require.Equal(t, byte(1), m.QoS)
		require.True(t, m.Received.Equal(stamp), "a retained message keeps its time")
	}

	tests := []struct {
		filter string
		want   []string
	}{
		{"r/1", []string{"r/1=one"}},
		{"r/#", []string{"r/1=one", "r/2=two"}},
		{"#", []string{"r/1=one", "r/2=two"}}, // '#' does not see $SYS
		{"$SYS/#", []string{"$SYS/up=yes"}},
		{"+/up", []string{}},
		{"r/3", []string{}},
		{"x/#", []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.filter, func(t *testing.T) {
			require.Equal(t, tt.want, payloads(late(tt.filter)))
		})
	}

	// A new retained message replaces the old one and reaches the current
	// subscribers too.
	current := newSub(t, "r/1", bus.Options{})
	require.NoError(t, router.Attach(current))
	require.Equal(t, 1, current.Len())
	bus.Take(current)
	require.Equal(t, 1, publish("r/1", "uno", true))
	m, _, ok, _ := bus.Take(current)
	require.True(t, ok)
	require.Equal(t, "uno", string(m.Payload))
	require.Equal(t, []string{"r/1=uno"}, payloads(late("r/1")))

	// An empty retained payload clears the topic, and is still delivered.
	require.Equal(t, 1, publish("r/1", "", true))
	m, _, ok, _ = bus.Take(current)
	require.True(t, ok)
	require.Empty(t, m.Payload)
	require.Equal(t, []string{"r/2=two"}, payloads(late("r/#")))
	require.Equal(t, []string{}, payloads(late("r/1")))

	// Clearing a topic that has nothing retained is harmless.
	publish("r/9", "", true)
	require.Equal(t, []string{"r/2=two"}, payloads(late("r/#")))

	// A publisher's retained messages are kept too.
	pub, err := router.Publisher("r/p")
	require.NoError(t, err)
	pub.PublishMessage(context.Background(), bus.Message{Topic: "ignored", Payload: []byte("pp"), Retained: true})
	require.Equal(t, []string{"r/2=two", "r/p=pp"}, payloads(late("r/#")))
}

// TestBusRetainedAttachRace publishes a retained message while
// subscriptions attach: each must get it exactly once, live or retained,
// never neither (the publication matched before the attach but stored the
// message after it) nor both.
func TestRouterRetainedAttachRace(t *testing.T) {
	const rounds, attachers = 1000, 4
	for _, viaPublisher := range []bool{false, true} {
		t.Run(fmt.Sprint("publisher=", viaPublisher), func(t *testing.T) {
			for round := range rounds {
				router := new(bus.Router)
				pub, err := router.Publisher("r/x")
				require.NoError(t, err)
				subs := make([]*bus.Subscription, attachers)
				for i := range subs {
					subs[i] = newSub(t, []string{"r/x", "r/+", "#", "r/#"}[i%4], bus.Options{})
				}
				errs := make(chan error, attachers)
				var wg sync.WaitGroup
				wg.Go(func() {
					m := bus.Message{Topic: "r/x", Payload: []byte("state"), Retained: true}
					if viaPublisher {
						pub.PublishMessage(context.Background(), m)
					} else if _, err := router.Publish(context.Background(), m); err != nil {
						errs <- err
					}
				})
				for _, s := range subs {
					wg.Go(func() {
						if err := router.Attach(s); err != nil {
							errs <- err
						}
					})
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					require.NoError(t, err)
				}
				for _, s := range subs {
					require.Equal(t, 1, s.Len(), "round %d: %s got the retained message %d times", round, s.Filter(), s.Len())
				}
			}
		})
	}
}

// As in MQTT, a retained message reaches subscriptions attached later with
// the retain flag, and those already attached without it.
func TestRouterRetainFlagOnlyForLateSubscribers(t *testing.T) {
	router := new(bus.Router)
	live := newSub(t, "state", bus.Options{})
	require.NoError(t, router.Attach(live))
	_, err := router.Publish(context.Background(), bus.Message{Topic: "state", Payload: []byte("on"), Retained: true})
	require.NoError(t, err)
	m, _, ok, _ := bus.Take(live)
	require.True(t, ok)
	require.False(t, m.Retained)

	late := newSub(t, "state", bus.Options{})
	require.NoError(t, router.Attach(late))
	m, _, ok, _ = bus.Take(late)
	require.True(t, ok)
	require.True(t, m.Retained)
	require.Equal(t, "on", string(m.Payload))
}
