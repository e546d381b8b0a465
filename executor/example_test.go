package executor_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// An executor runs on a pool of workers until its context ends, then drains.
func ExampleExecutor_Run() {
	ex := executor.New(executor.Options{Workers: 2})
	bus := new(subscribers.Router)
	node := ex.NewOwner("imu_filter", nil)

	got := make(chan struct{})
	_, err := node.Subscribe(bus, "sensors/+/imu", func(ctx context.Context, m subscribers.Message) {
		fmt.Printf("%s: %s\n", m.Topic, m.Payload)
		close(got)
	})
	if err != nil {
		panic(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- ex.Run(ctx) }()

	pub, _ := bus.Publisher("sensors/left/imu")
	pub.Publish(ctx, []byte(`{"ax":0.1}`))
	<-got
	cancel()
	fmt.Println("stopped:", <-done)
	// Output:
	// sensors/left/imu: {"ax":0.1}
	// stopped: <nil>
}

// Timers run on drift-free deadlines; on a simulated clock a test steps time
// by hand and spins the executor on its own goroutine.
func ExampleOwner_Timer() {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := timers.NewSim(start)
	ex := executor.New(executor.Options{Clock: clock})
	node := ex.NewOwner("heartbeat", nil)
	_, err := node.Timer(100*time.Millisecond, func(ctx context.Context, ev timers.Event) {
		fmt.Printf("tick for %v, late %v, missed %d\n", ev.Expected.Sub(start), ev.Late(), ev.Missed)
	})
	if err != nil {
		panic(err)
	}
	clock.Advance(100 * time.Millisecond)
	ex.SpinSome()
	clock.Advance(250 * time.Millisecond) // 350 ms: the 300 ms deadline is skipped
	ex.SpinSome()
	// Output:
	// tick for 100ms, late 0s, missed 0
	// tick for 200ms, late 150ms, missed 1
}

// Each subscription has its own bounded queue; with drop_oldest (the
// default) a full queue keeps the newest messages.
func ExampleOwner_Subscribe() {
	ex := executor.New(executor.Options{})
	bus := new(subscribers.Router)
	node := ex.NewOwner("odom", nil)
	sub, err := node.Subscribe(bus, "robot/odom", func(ctx context.Context, m subscribers.Message) {
		fmt.Printf("%s\n", m.Payload)
	}, executor.Depth(2), executor.Overflow(subscribers.DropOldest))
	if err != nil {
		panic(err)
	}
	pub, _ := bus.Publisher("robot/odom")
	for _, p := range []string{"x=1", "x=2", "x=3"} {
		pub.Publish(context.Background(), []byte(p))
	}
	ex.SpinAll()
	fmt.Println("dropped:", sub.Stats().Dropped[subscribers.QueueFull])
	// Output:
	// x=2
	// x=3
	// dropped: 1
}

// Shutdown stops a running executor as net/http.Server.Shutdown stops a
// server: it drains the queues and returns nil, or ctx.Err() when the
// deadline comes first.
func ExampleExecutor_Shutdown() {
	ex := executor.New(executor.Options{Workers: 1})
	bus := new(subscribers.Router)
	n := 0
	_, err := ex.NewOwner("counter", nil).Subscribe(bus, "ticks", func(ctx context.Context, _ subscribers.Message) { n++ },
		executor.Depth(10))
	if err != nil {
		panic(err)
	}
	done := make(chan error)
	go func() { done <- ex.Run(context.Background()) }()

	pub, _ := bus.Publisher("ticks")
	for range 3 {
		pub.Publish(context.Background(), nil)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	fmt.Println("shutdown:", ex.Shutdown(ctx), "ran:", n, "run:", <-done)
	// Output:
	// shutdown: <nil> ran: 3 run: <nil>
}

// A priority worker runs the hot path's callback while the only other
// worker is busy with a slow one.
func ExampleOptions_priorityWorkers() {
	ex := executor.New(executor.Options{Workers: 1, PriorityWorkers: 1})
	bus := new(subscribers.Router)

	busy, release := make(chan struct{}), make(chan struct{})
	_, err := ex.NewOwner("mapper", nil).Subscribe(bus, "map/update", func(context.Context, subscribers.Message) {
		close(busy)
		<-release // a long computation
	})
	if err != nil {
		panic(err)
	}
	braked := make(chan struct{})
	_, err = ex.NewOwner("safety", nil).Subscribe(bus, "sensors/bumper", func(ctx context.Context, m subscribers.Message) {
		fmt.Printf("brake on %s while the mapper runs\n", m.Payload)
		close(braked)
	}, executor.Priority(1))
	if err != nil {
		panic(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- ex.Run(ctx) }()
	bus.Publish(ctx, subscribers.Message{Topic: "map/update", Payload: []byte("scan")})
	<-busy
	bus.Publish(ctx, subscribers.Message{Topic: "sensors/bumper", Payload: []byte("contact")})
	<-braked
	close(release)
	cancel()
	if err := <-done; err != nil {
		panic(err)
	}
	// Output: brake on contact while the mapper runs
}

// Two lidars' pipelines on two pinned workers: each worker's thread stays
// on a CPU of its own (on Linux), so the two transforms, ready at once,
// run on two CPUs at once.
func ExampleOptions_pinWorkers() {
	ex := executor.New(executor.Options{Workers: 2, PinWorkers: true})
	bus := new(subscribers.Router)

	var both sync.WaitGroup
	both.Add(2)
	for _, lidar := range []string{"front", "rear"} {
		_, err := ex.NewOwner("transform_"+lidar, nil).Subscribe(bus, "lidar/"+lidar, func(context.Context, subscribers.Message) {
			both.Done()
			both.Wait() // each waits for the other: they run side by side
		})
		if err != nil {
			panic(err)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- ex.Run(ctx) }()
	bus.Publish(ctx, subscribers.Message{Topic: "lidar/front", Payload: []byte("scan")})
	bus.Publish(ctx, subscribers.Message{Topic: "lidar/rear", Payload: []byte("scan")})
	both.Wait()
	fmt.Println("both transforms ran side by side")
	cancel()
	if err := <-done; err != nil {
		panic(err)
	}
	// Output: both transforms ran side by side
}
