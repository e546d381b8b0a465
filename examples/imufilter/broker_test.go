package imufilter_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/examples/internal/exampletest"
	"github.com/robotexec/robotexec/internal/mqtt/broker"
	"github.com/robotexec/robotexec/internal/mqtttest"
)

// The filter in a running robotexec, on a real broker: samples published
// by another client are filtered and the average comes back over MQTT.
func TestFilterOverTheBroker(t *testing.T) {
	b := mqtttest.Embedded(t, broker.Config{})
	exampletest.StartApp(t, b.URL(), `nodes:
  - name: imu_filter
    type: imu_filter
    params: { input: robot/imu0/data, output: robot/imu0/filtered, alpha: 0.5, period: 20ms, log: 0s }
`, nil)
	filtered := exampletest.Listen(t, b.URL(), "robot/imu0/filtered")
	exampletest.Publish(t, b.URL(), "robot/imu0/data", `{"ax":4,"az":9.8}`, `{"ax":0,"az":9.8}`, `not json`, `{"ax":2,"az":9.8}`)

	want := `{"ax":2,"ay":0,"az":9.8,"gx":0,"gy":0,"gz":0,"samples":3}`
	deadline := time.After(15 * time.Second)
	for {
		select {
		case m := <-filtered:
			if bytes.Contains(m.Payload, []byte(`"samples":3`)) {
				require.JSONEq(t, want, string(m.Payload))
				return
			}
		case <-deadline:
			t.Fatal("no average of the three samples within 15s")
		}
	}
}
