package bus_test

import (
	"context"
	"fmt"

	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/waitset"
)

// ExampleSubscription drives a subscription by hand, as an executor would:
// deliveries fill its queue and make it ready in the wait set, and each run
// takes one message from the front. With the default drop_oldest policy a
// full queue evicts its oldest message.
func ExampleSubscription() {
	sub, err := bus.New("robot/+/odom", bus.Options{Depth: 2})
	if err != nil {
		panic(err)
	}
	set := waitset.New(nil, nil)
	set.Register(bus.Entity(sub), waitset.Subscription)

	for _, p := range []string{"x=1", "x=2", "x=3"} {
		sub.Deliver(bus.Message{Topic: "robot/7/odom", Payload: []byte(p)})
	}
	fmt.Println("ready:", !set.Empty())

	for {
		m, seq, ok, more := bus.Take(sub)
		if !ok {
			break
		}
		fmt.Printf("#%d %s %s more=%v\n", seq, m.Topic, m.Payload, more)
	}
	st := sub.Stats()
	fmt.Println("accepted:", st.Accepted, "dropped:", st.Dropped[bus.QueueFull])
	// Output:
	// ready: true
	// #2 robot/7/odom x=2 more=true
	// #3 robot/7/odom x=3 more=false
	// accepted: 3 dropped: 1
}

// ExampleRouter publishes through an in-process router to the subscriptions whose
// filters match, including a retained message that a later subscription
// receives when it attaches.
func ExampleRouter() {
	router := new(bus.Router)
	set := waitset.New(nil, nil)
	subscribe := func(filter string) *bus.Subscription {
		sub, err := bus.New(filter, bus.Options{})
		if err != nil {
			panic(err)
		}
		set.Register(bus.Entity(sub), waitset.Subscription)
		if err := router.Attach(sub); err != nil {
			panic(err)
		}
		return sub
	}

	imu := subscribe("sensors/+/imu")
	pub, err := router.Publisher("sensors/left/imu")
	if err != nil {
		panic(err)
	}
	n, _ := pub.PublishMessage(context.Background(), bus.Message{Payload: []byte("ax=0.1")})
	fmt.Println("accepted by", n)

	if _, err := router.Publish(context.Background(), bus.Message{Topic: "robot/mode", Payload: []byte("auto"), Retained: true}); err != nil {
		panic(err)
	}
	mode := subscribe("robot/#")

	for _, sub := range []*bus.Subscription{imu, mode} {
		m, _, _, _ := bus.Take(sub)
		fmt.Printf("%s got %s %s retained=%v\n", sub.Filter(), m.Topic, m.Payload, m.Retained)
	}
	// Output:
	// accepted by 1
	// sensors/+/imu got sensors/left/imu ax=0.1 retained=false
	// robot/# got robot/mode auto retained=true
}
