package config

import "time"

// Executor is the executor: section.
type Executor struct {
	// Workers is the number of worker goroutines; 0 means one per CPU
	// (GOMAXPROCS). (optional) Defaults to 0. Must not be negative.
	Workers int `yaml:"workers"`
	// PriorityWorkers is the number of workers, beside Workers, that
	// run only the callbacks of priority above 0 (a node's priority),
	// while Workers run the others: a callback of the hot path finds a
	// worker free however long the others run. On Linux the Workers'
	// threads then run at nice 10, so that the OS gives a priority
	// worker that wakes a core; GOMAXPROCS is raised above the workers
	// in all. (optional) Defaults to 0. Must not be negative.
	PriorityWorkers int `yaml:"priority_workers"`
	// Realtime runs the priority workers' threads in Linux's real-time
	// class (SCHED_FIFO, priority 1), ahead of every other thread, where
	// the process may (CAP_SYS_NICE, as root, or an RLIMIT_RTPRIO of 1
	// or more); elsewhere they run at nice 0, and robotexec logs why.
	// (optional) Defaults to false. Needs PriorityWorkers.
	Realtime bool `yaml:"realtime"`
	// PinWorkers pins each worker's thread to one of the CPUs the
	// process may run on (every CPU, or taskset's), the workers on CPUs
	// in turn, the priority workers after the others, so that a worker
	// woken for a callback finds its CPU free of the other workers;
	// GOMAXPROCS is raised above the workers in all. Linux only; elsewhere,
	// or where the OS refuses, robotexec logs why and runs them unpinned.
	// (optional) Defaults to false.
	PinWorkers bool `yaml:"pin_workers"`
	// ReserveForTimers keeps a worker for a timer about to fall due: a
	// worker does not start a subscription's callback of priority 0 that
	// it expects to run past the next timer's deadline while no other
	// worker is out of work, but waits for the timer (executor.Options).
	// (optional) Defaults to false.
	ReserveForTimers bool `yaml:"reserve_for_timers"`
	// Procs is the number of processors the process runs its goroutines
	// on (Go's GOMAXPROCS); 0 lets robotexec choose: 1 for a config whose
	// nodes are all of the built-in types, on an external broker, without
	// priority or pinned workers (their callbacks are short, and one
	// processor spares the wake-ups of idle threads between the MQTT
	// client and the workers), else GOMAXPROCS as Go sets it, raised to
	// what PriorityWorkers, PinWorkers and the precise timer source need.
	// A Procs above 0 is kept as it is. (optional) Defaults to 0. Must not
	// be negative; with PriorityWorkers or PinWorkers, at least the workers
	// in all.
	Procs int `yaml:"procs"`
	// QueueDepth is the default QoS depth of a subscription's queue.
	// (optional) Defaults to subscribers.DefaultDepth, 10. At least 1.
	QueueDepth int `yaml:"queue_depth"`
	// Overflow is what a full queue does: OverflowDropOldest,
	// OverflowDropNewest or OverflowBlock. (optional) Defaults to "": by
	// QoS, OverflowBlock for QoS 1 and 2 subscriptions (at least once to
	// the callback: the broker's message is acknowledged once the queue
	// took it) and OverflowDropOldest for QoS 0 ones (ROS's KEEP_LAST).
	Overflow string `yaml:"overflow"`
	// TimerSource drives the timers: TimerSourcePrecise, a thread of its
	// own on a timerfd (tens of microseconds late,
	// where Go's timers are about a millisecond late; one thread, and one
	// processor kept free: GOMAXPROCS is raised above the workers), or
	// TimerSourceGo, Go's runtime timers. Precise falls back to Go where it
	// is not supported. (optional) Defaults to TimerSourcePrecise.
	TimerSource string `yaml:"timer_source"`
	// InProcess makes the nodes of this process reach each other without
	// the broker: a publication goes into the queues of the matching
	// subscriptions of the process directly, and to the broker for
	// everyone else; false sends every publication through the broker.
	// (optional) Defaults to true.
	InProcess bool `yaml:"in_process"`
	// GCHeadroom is how much the Go heap may grow between garbage
	// collections (GOGC's proportion of the live data applies where it
	// allows more). With little live data, Go collects every few
	// megabytes, which at thousands of messages a second means a
	// collection every few milliseconds, each delaying the callbacks and
	// deliveries that run meanwhile; the cost is up to this much memory
	// of garbage. 0 leaves Go's pacing alone, as does GOGC=off. (optional)
	// Defaults to DefaultGCHeadroom, 32 MiB.
	GCHeadroom Size `yaml:"gc_headroom"`
	// UseSimTime makes the timers and the nodes' clocks follow the clock
	// topic instead of the wall clock, as ROS's use_sim_time: the nodes
	// start with the first clock message, and a timer fires when
	// simulated time passes its deadline. (optional) Defaults to false.
	UseSimTime bool `yaml:"use_sim_time"`
	// ClockTopic is the topic of the simulated time, messages
	// {"time": RFC3339Nano} (robotexec play -clock publishes them).
	// (optional) Defaults to DefaultClockTopic.
	ClockTopic string `yaml:"clock_topic"`
	// DrainTimeout is the drain deadline of a stop: past it, the
	// contexts of the callbacks running and of those still to run are
	// done, so that a long callback that watches its context returns,
	// and the rest of the queues drains without publishing. (optional)
	// Defaults to DefaultDrainTimeout, 10 s; at least 1ms.
	DrainTimeout time.Duration `yaml:"drain_timeout"`
}
