// Package executor runs the callbacks of timers and subscriptions on a small
// pool of worker goroutines, with the guarantees of a ROS 2 executor.
//
// # Model
//
// The executor follows the scheduler model of docs/design.md (Scheduler
// model) in the repository. Every timer and subscription is an entity that
// is waiting, queued or running, never two at once. A trigger puts the
// entity in the wait set (waitset in the repository), with set
// semantics. When the run queue is empty, the next worker to look for work
// takes waiting ∩ wait set as one batch into the run queue, all ready timers
// first, then all ready subscriptions; workers take entities from the head
// of the run queue, run it (a timer's callback, or a subscription's front
// message) and return the entity to waiting. An entity triggered while
// queued or running is taken again after its run: no trigger is lost, and no
// entity ever runs concurrently with itself. A subscription with messages
// left at the end of a run goes to the back of the ready queue
// (docs/design.md, Order per subscription), so every subscription gets its
// turn.
//
// A subscription's run serves a bounded batch of its messages, in order,
// on one worker (docs/design.md, Scheduler model: message batches): up to
// Options.Batch (32 by default), while the run has lasted less than
// Options.BatchBudget (10 µs) and no timer is due (none waiting in the wait
// set, in the run queue or on a group). Short callbacks thus share one pass
// through the run queue — handing a subscription from worker to worker
// moves its cache lines between cores, which costs more than an empty
// callback — while a callback of 10 µs or more ends its run. Batch: 1 gives
// one message per run. A run claims the messages it may serve under one
// hold of the queue's lock and gives back what it did not serve when it
// ends (Claim in internal/bus); a queue of one message gives it at once.
// Taking them one by one, the run and the publisher passed the queue's
// lock back and forth at every message, half the CPU samples of the
// dispatch workload. A claimed message counts toward the depth until it
// starts, as a queued one.
//
// Timers go further first, as in rclcpp: the run queue has a lane for
// timers ahead of the subscriptions', and a worker that looks for work
// takes the timers that fell due since the last batch into it, so a due
// timer starts on the first worker that frees, ahead of queued
// subscriptions.
//
// The scheduler is a role, not a goroutine: triggers are lock-free pushes
// onto the wait set made where they happen (a timer's deadline, a message's
// delivery), and a worker that runs out of work forms the next batch itself,
// so no goroutine hop lies between a trigger and a worker.
//
// # Workers between callbacks
//
// A worker that runs out of work looks for more for up to 20 µs before it
// parks, adapting that busy-wait to how often it pays off (see idleBusyWait
// in the source): waking parked workers for every message of a dense stream
// costs far more, in latency, than the busy-wait costs in CPU. Between
// callbacks a worker also serves timers whose deadline has passed, so that
// timers keep their time while every worker is busy; on the precise timer
// source the queue's early ring wakes a worker shortly before a deadline,
// which polls for it rather than sleeping through it.
//
// # Speed on two CPUs
//
// A batch reads a clock after each callback to keep to its budget: the
// time-stamp counter where the kernel trusts it (13 ns a read here); else,
// where the counter ticks at a constant rate, the counter of the worker's CPU
// (13 ns; a batch that finds itself on another CPU ends); else time.Since (37
// ns here, 32–59 ns on a VM on kvm-clock). On time.Since the reads were a
// tenth of the dispatch workload's CPU samples, and its throughput 0.35–0.65
// of the chan pool in five runs, against 0.56–0.79 on the CPU's counter in
// five alternating with them (BENCHMARKS.md, "Steady speed"). The rest of the
// spread between runs is the Go scheduler's placement of one producer and two
// workers on two processors: a worker out of work yields (runtime.Gosched)
// and takes itself back, never the producer that a full queue's reader
// readied on the other processor, then parks; its processor sleeps, and the
// next wake-up waits for the OS to run its thread. Runtime traces show a
// processor idle while a goroutine was runnable 51–62% of the time beside a
// busy process, where the chan pool's processors were busy 95%. What flips a
// run between the two speeds is the host: the cost of moving a cache line
// between the two vCPUs, about 150 ns or about 500 ns a round trip, changing
// every few seconds to minutes. At 500 ns an empty callback published through
// the bus took 223–347 ns against 117–146, while the chan pool kept to 59–92
// ns (BENCHMARKS.md, "What flips the mode"). The pool does not need the
// second vCPU: on one processor (GOMAXPROCS=1) it ran 14–15M callbacks a
// second, as on two, and a probe build of the executor 9.5M. Runs of up to
// 32 messages (DefaultBatch) made an empty callback cost 49–50 ns instead of
// 59–76 in three alternations, and did not help in the slow mode
// (BENCHMARKS.md, "Longer runs"). What the slow mode slowed was the
// producer: its unlock of a queue waited for the lines of the slot it had
// just written, which the worker that took the slot's last message held.
// Slowed, it let the workers catch up and serve its messages in runs of 6–9
// instead of about 25, each costing a trigger and a dequeue. The bus now
// fetches the next slot for writing as soon as a message is queued
// (package bus, prefetchSlot): in 0.3 s rounds at a 500 ns round trip,
// publishing through the bus ran 10.2M callbacks a second instead of 4.2M
// (the pool 12–13M), delivering directly 14.5M instead of 10.3M
// (BENCHMARKS.md, "The next slot, fetched ahead").
//
// Latency tails come from the same two CPUs. While a process keeps both
// busy, the kernel preempts one of its threads for a 4 ms tick every few
// hundred milliseconds; a worker preempted in a run holds its subscription
// (per-topic order), and one waiting in that processor's run queue waits
// too unless the other processor steals it, which a producer that yields
// in a loop prevents. At 100k events/s from such a producer the p99 was
// 0.03–1.9 ms against the chan pool's 9–19 µs; from one that sleeps between
// bursts, 86–176 µs against 61–242 (BENCHMARKS.md, "Latency tails").
//
// # Callback groups
//
// Every callback belongs to a group: the one given with InGroup, or its
// owner's default group, mutually exclusive. Callbacks of a mutually
// exclusive group never overlap; a reentrant group lets different callbacks
// overlap. Groups never block a worker: see [Group].
//
// # Starvation freedom
//
// Let E be the number of entities, T the number of timers among them, W the
// number of workers and C the longest run: the longest callback, plus the
// batch budget for a subscription's run (a run starts no callback once it
// has lasted the budget). A timer that falls due is
// taken into the timers' lane at the next dequeue, behind at most T-1 other
// timers: it starts within ((T-1)/W + 1)·C. A subscription that becomes
// ready joins the batch formed when the run queue next runs empty, and
// batches are FIFO: before it is taken from the run queue, at most E-1 other
// subscriptions are (the run queue holds each entity at most once, and the
// subscriptions ahead of it in its batch became ready before it), and the
// timers that fall due meanwhile. As long as the timers' callbacks leave
// the workers time (their total load below W), a ready subscription starts
// within ((E-1)/W + 1)·C plus that timer load. A callback of a mutually
// exclusive group of g callbacks may wait (g-1)·C more for the ones ahead of
// it in the group. The tests check these counts on recorded traces.
//
// # Shutdown
//
// [Executor.Run] returns after its context ends and every queue has drained
// (Termination, docs/design.md, Scheduler model): timers stop, subscriptions
// refuse new messages and count them as dropped (reason closed), and every
// message accepted before that runs. [Executor.Shutdown] stops it as
// net/http.Server's Shutdown stops a server: it waits for the drain, and
// returns ctx.Err() when its context's deadline comes first, the drain
// carrying on. Callbacks that panic are recovered at one place, logged with
// their stack, counted, and the executor carries on.
//
// # Concurrency
//
// Executor, Owner and Group are safe for concurrent use. Callbacks may
// register new callbacks and publish. The Spin methods run callbacks on the
// caller's goroutine and must not be called during Run or concurrently.
package executor
