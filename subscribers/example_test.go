package subscribers_test

import (
	"context"
	"fmt"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/subscribers"
)

// ExampleRouter publishes through an in-process router to the
// subscriptions of an executor whose filters match, including a retained
// message that a later subscription receives when it is made.
func ExampleRouter() {
	router := subscribers.NewRouter(subscribers.RouterOptions{QoS: 1})
	ex := executor.New(executor.Options{})
	node := ex.NewOwner("printer", nil)
	show := func(ctx context.Context, m subscribers.Message) {
		fmt.Printf("got %s %s retained=%v\n", m.Topic, m.Payload, m.Retained)
	}
	if _, err := node.Subscribe(router, "sensors/+/imu", show); err != nil {
		panic(err)
	}
	pub, err := router.Publisher("sensors/left/imu")
	if err != nil {
		panic(err)
	}
	n, _ := pub.PublishMessage(context.Background(), subscribers.Message{Payload: []byte("ax=0.1")})
	fmt.Println("accepted by", n)
	ex.SpinAll()

	if _, err := router.Publish(context.Background(), subscribers.Message{Topic: "robot/mode", Payload: []byte("auto"), Retained: true}); err != nil {
		panic(err)
	}
	if _, err := node.Subscribe(router, "robot/#", show); err != nil {
		panic(err)
	}
	ex.SpinAll()
	// Output:
	// accepted by 1
	// got sensors/left/imu ax=0.1 retained=false
	// got robot/mode auto retained=true
}

// ExampleSubscription shows a full queue with the default drop_oldest
// policy: it evicts its oldest message, and counts the drop.
func ExampleSubscription() {
	router := new(subscribers.Router)
	ex := executor.New(executor.Options{})
	sub, err := ex.NewOwner("odom", nil).Subscribe(router, "robot/+/odom", func(ctx context.Context, m subscribers.Message) {
		fmt.Printf("%s %s\n", m.Topic, m.Payload)
	}, executor.Depth(2))
	if err != nil {
		panic(err)
	}
	for _, p := range []string{"x=1", "x=2", "x=3"} {
		router.Publish(context.Background(), subscribers.Message{Topic: "robot/7/odom", Payload: []byte(p)})
	}
	fmt.Println("queued:", sub.Len())
	ex.SpinAll()
	st := sub.Stats()
	fmt.Println("accepted:", st.Accepted, "dropped:", st.Dropped[subscribers.QueueFull], "policy:", sub.Options().Overflow)
	// Output:
	// queued: 2
	// robot/7/odom x=2
	// robot/7/odom x=3
	// accepted: 3 dropped: 1 policy: drop_oldest
}

// ExampleMatch checks topics against an MQTT filter.
func ExampleMatch() {
	fmt.Println(subscribers.Match("robot/+/odom", "robot/7/odom"))
	fmt.Println(subscribers.Match("robot/#", "robot/7/odom"))
	fmt.Println(subscribers.Match("robot/+", "robot/7/odom"))
	fmt.Println(subscribers.ValidateTopic("robot/+/odom") != nil)
	// Output:
	// true
	// true
	// false
	// true
}
