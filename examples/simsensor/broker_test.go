package simsensor_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/examples/internal/exampletest"
	"github.com/robotexec/robotexec/examples/simsensor"
	"github.com/robotexec/robotexec/internal/mqtt/broker"
	"github.com/robotexec/robotexec/internal/mqtttest"
)

// Both sensors in a running robotexec, on a real broker and the wall
// clock: another client receives their samples, in order, near the
// simulated truth.
func TestSensorsOverTheBroker(t *testing.T) {
	b := mqtttest.Embedded(t, broker.Config{})
	raw := exampletest.Listen(t, b.URL(), "sensors/+/raw")
	exampletest.StartApp(t, b.URL(), `nodes:
  - { name: imu0, type: sim_imu, params: { topic: sensors/imu0/raw, rate: 200 } }
  - { name: odom, type: sim_odom, params: { topic: sensors/odom/raw, rate: 100, speed: 1 } }
`, nil)
	var imu []simsensor.IMUSample
	var odom []simsensor.Odometry
	deadline := time.After(15 * time.Second)
	for len(imu) < 10 || len(odom) < 10 {
		select {
		case m := <-raw:
			switch m.Topic {
			case "sensors/imu0/raw":
				var s simsensor.IMUSample
				require.NoError(t, json.Unmarshal(m.Payload, &s))
				imu = append(imu, s)
			case "sensors/odom/raw":
				var o simsensor.Odometry
				require.NoError(t, json.Unmarshal(m.Payload, &o))
				odom = append(odom, o)
			default:
				t.Fatalf("unexpected topic %s", m.Topic)
			}
		case <-deadline:
			t.Fatalf("got %d IMU samples and %d poses within 15s, want 10 of each", len(imu), len(odom))
		}
	}
	var last time.Time
	for _, s := range imu {
		require.InDelta(t, 9.81, s.AZ, 0.2, "10 standard deviations of the noise")
		require.InDelta(t, 0.2, s.GZ, 0.2)
		stamp, err := time.Parse(time.RFC3339Nano, s.Stamp)
		require.NoError(t, err)
		require.True(t, stamp.After(last), "stamp %v after %v", stamp, last)
		last = stamp
	}
	for i, o := range odom {
		require.InDelta(t, 1, o.V, 0.2)
		if i > 0 {
			require.Greater(t, o.X, odom[i-1].X, "driving forward along x at first")
		}
	}
}
