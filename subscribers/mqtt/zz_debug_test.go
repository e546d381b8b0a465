package mqtt_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/mqtttest"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/subscribers/mqtt"
	"github.com/robotexec/robotexec/subscribers/mqtt/broker"
)

func TestZZDebug(t *testing.T) {
	t.Parallel()
	b := mqtttest.Embedded(t, broker.Config{})
	for _, qos := range []byte{0, 1} {
		t.Run(fmt.Sprint(qos), func(t *testing.T) {
			c := dial(t, b.URL(), mqtt.Config{QoS: qos})
			ex := executor.New(executor.Options{Workers: 2})
			o := ex.NewOwner("n", nil)
			rec := newRecorder()
			_, err := o.Subscribe(c, "sensors/+/imu", rec.add, executor.Depth(64), executor.Overflow(subscribers.Block))
			if err != nil {
				t.Fatal(err)
			}
			startExecutor(t, ex)
			pub := rawClient(t, b.URL())
			const n = 200
			for i := range n {
				for _, topic := range []string{"sensors/left/imu", "sensors/right/imu", "sensors/left/gps"} {
					pub.Publish(topic, qos, false, fmt.Sprintf("%s#%d", topic, i))
				}
			}
			time.Sleep(2 * time.Second)
			t.Logf("got %d; stats %+v", len(rec.snapshot()), c.Stats())
		})
	}
}
