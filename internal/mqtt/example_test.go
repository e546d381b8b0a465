package mqtt_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/internal/mqtt/broker"
	"github.com/robotexec/robotexec/subscribers"
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
	_, err = node.Subscribe(client, "sensors/+/imu", func(ctx context.Context, m subscribers.Message) {
		fmt.Printf("%s: %s (QoS %d)\n", m.Topic, m.Payload, m.QoS)
		close(got)
	}, executor.Depth(100))
	if err != nil {
		panic(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error)
	go func() { done <- ex.Run(runCtx) }()

	pub, err := client.Publisher("sensors/left/imu", bus.WithQoS(1))
	if err != nil {
		panic(err)
	}
	if err := pub.Publish(ctx, []byte(`{"ax":0.1}`)); err != nil {
		panic(err)
	}
	<-got
	stop()
	fmt.Println("stopped:", <-done)
	// Output:
	// sensors/left/imu: {"ax":0.1} (QoS 1)
	// stopped: <nil>
}

// With InProcess, a publication reaches the subscriptions of the same
// process directly, and the broker for everyone else. The client asks
// the broker not to send its own publications back (MQTT 5's No Local):
// the subscription in the process gets the message once, and the broker
// sends the client nothing.
func Example_inProcess() {
	quiet := slog.New(slog.DiscardHandler)
	const id = "robot"
	b, err := broker.New(broker.Config{Listen: "127.0.0.1:0", Logger: quiet})
	if err != nil {
		panic(err)
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dial := func(cfg mqtt.Config) *mqtt.Client {
		cfg.Broker, cfg.QoS, cfg.StatusTopic, cfg.Logger = b.URL(), 1, "-", quiet
		c, err := mqtt.Dial(cfg)
		if err != nil {
			panic(err)
		}
		if err := c.WaitConnected(ctx); err != nil {
			panic(err)
		}
		return c
	}
	robot := dial(mqtt.Config{ClientID: id, InProcess: true, Audience: b.AudienceOf(id)})
	defer robot.Close()
	outsider := dial(mqtt.Config{ClientID: "outsider", CleanSession: true})
	defer outsider.Close()

	ex := executor.New(executor.Options{Workers: 2})
	got := make(chan string, 2)
	for _, s := range []struct {
		who    string
		source subscribers.Source
	}{{"in process", robot}, {"outside", outsider}} {
		_, err := ex.NewOwner(s.who, nil).Subscribe(s.source, "robot/odom", func(ctx context.Context, m subscribers.Message) {
			got <- fmt.Sprintf("%s: %s", s.who, m.Payload)
		})
		if err != nil {
			panic(err)
		}
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error)
	go func() { done <- ex.Run(runCtx) }()

	pub, err := robot.Publisher("robot/odom", bus.WithQoS(1))
	if err != nil {
		panic(err)
	}
	if err := pub.Publish(ctx, []byte(`{"x":1}`)); err != nil {
		panic(err)
	}
	lines := []string{<-got, <-got}
	slices.Sort(lines)
	fmt.Println(strings.Join(lines, "\n"))
	stop()
	<-done
	fmt.Println("received from the broker:", robot.Stats().Received)
	// Output:
	// in process: {"x":1}
	// outside: {"x":1}
	// received from the broker: 0
}

// The broker's refusal of a publication is an error that names its
// reason, an MQTT 5 reason code: here a user who may not write there.
func ExampleRefusedError() {
	quiet := slog.New(slog.DiscardHandler)
	b, err := broker.New(broker.Config{Listen: "127.0.0.1:0", Logger: quiet,
		Users: map[string]broker.User{"viewer": {Password: "v1ew", Read: []string{"#"}}}})
	if err != nil {
		panic(err)
	}
	defer b.Close()
	c, err := mqtt.Dial(mqtt.Config{Broker: b.URL(), ClientID: "viewer-1", Username: "viewer", Password: "v1ew",
		CleanSession: true, StatusTopic: "-", Logger: quiet})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.WaitConnected(ctx); err != nil {
		panic(err)
	}
	err = c.PublishWait(ctx, subscribers.Message{Topic: "robot/cmd", Payload: []byte("go"), QoS: 1})
	fmt.Println(err)
	fmt.Println(errors.Is(err, mqtt.NotAuthorized), c.Stats().Refused[mqtt.NotAuthorized])
	// Output:
	// mqtt: publish "robot/cmd": the broker refused: not authorized (0x87)
	// true 1
}
