package exampletest_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/examples/internal/exampletest"
	"github.com/robotexec/robotexec/internal/mqtt/broker"
	"github.com/robotexec/robotexec/internal/mqtttest"
)

// A bridge node started by StartApp forwards what Publish sends to what
// Listen receives, in order; Stop stops it, and a second Stop (the
// test's cleanup) returns at once.
func TestRoundTripThroughAnApp(t *testing.T) {
	b := mqtttest.Embedded(t, broker.Config{})
	out := exampletest.Listen(t, b.URL(), "out/#")
	app := exampletest.StartApp(t, b.URL(), `nodes:
  - { name: fwd, type: bridge, params: { from: in/+, to: out/+ } }
`, nil)
	exampletest.Publish(t, b.URL(), "in/a", "1", "2", "3")
	for _, want := range []string{"1", "2", "3"} {
		select {
		case m := <-out:
			require.Equal(t, "out/a", m.Topic)
			require.Equal(t, want, string(m.Payload))
		case <-time.After(15 * time.Second):
			t.Fatalf("no %q on out/a within 15s", want)
		}
	}
	exampletest.Stop(t, app)
	exampletest.Publish(t, b.URL(), "in/a", "after")
	select {
	case m := <-out:
		t.Fatalf("forwarded %q after Stop", m.Payload)
	case <-time.After(200 * time.Millisecond):
	}
}
