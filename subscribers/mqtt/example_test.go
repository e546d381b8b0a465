package mqtt_test

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/subscribers/mqtt"
	"github.com/robotexec/robotexec/subscribers/mqtt/broker"
)

// A node subscribes to MQTT topics through the executor and publishes
// through the same client. The embedded broker on a free loopback port
// stands in for the robot's broker.
func Example() {
	quiet := slog.New(slog.DiscardHandler)
	b, err := broker.New(broker.Config{Listen: "127.0.0.1:0", Logger: quiet})
	if err != nil {
		panic(err)
	}
	defer b.Close()

	client, err := mqtt.Dial(mqtt.Config{Broker: b.URL(), ClientID: "example", QoS: 1, Logger: quiet})
	if err != nil {
		panic(err)
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := client.WaitConnected(ctx); err != nil {
		panic(err)
	}

	ex := executor.New(executor.Options{Workers: 2})
	node := ex.NewOwner("imu_logger", nil)
	got := make(chan struct{})
	_, err = node.Subscribe(client, "sensors/+/imu", func(m subscribers.Message) {
		fmt.Printf("%s: %s (QoS %d)\n", m.Topic, m.Payload, m.QoS)
		close(got)
	}, executor.Depth(100))
	if err != nil {
		panic(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error)
	go func() { done <- ex.Run(runCtx) }()

	pub, err := client.Publisher("sensors/left/imu", 1, false)
	if err != nil {
		panic(err)
	}
	if err := pub.Publish([]byte(`{"ax":0.1}`)); err != nil {
		panic(err)
	}
	<-got
	stop()
	fmt.Println("stopped:", <-done)
	// Output:
	// sensors/left/imu: {"ax":0.1} (QoS 1)
	// stopped: <nil>
}
