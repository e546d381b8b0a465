// Package executor runs the callbacks of timers and subscriptions on a small
// pool of worker goroutines, with the guarantees of a ROS 2 executor: no
// timer or subscription runs concurrently with itself, a subscription's
// messages run in their order, the callbacks of a mutually exclusive group
// never overlap, a due timer starts ahead of queued messages, and every
// ready callback gets its turn.
//
// Make one with [New], register callbacks through an [Owner]
// ([Executor.NewOwner]), and call [Executor.Run]; a test can call the Spin
// methods instead.
//
// # Model
//
// The executor follows the scheduler model of docs/design.md (Scheduler
// model) in the repository. A trigger (a timer's deadline, a message's
// delivery) puts its entity in a wait set; the worker that finds the run
// queue empty takes every ready entity into it as one batch, timers ahead
// of subscriptions, and workers run entities from its head. A subscription's
// run serves up to Options.Batch of its messages (32 by default) on one
// worker while it has lasted less than Options.BatchBudget (10 µs) and no
// timer is due (docs/design.md, Scheduler model: message batches); one with
// messages left then goes to the back of the ready queue (docs/design.md,
// Order per subscription). A worker out of work busy-waits briefly before
// it parks, and a busy one serves due timers between callbacks; a
// callback's publication to an idle subscription is run by the publishing
// worker after the callback returns (docs/design.md, Idle workers and
// hand-off). Subscriptions of a priority above 0 (Priority) are taken at
// every dequeue, after the due timers and ahead of the batch, the highest
// first (docs/design.md, Priorities); Options.PriorityWorkers gives them
// workers of their own, whose threads the OS prefers. How long a ready
// timer or subscription may wait is bounded (docs/design.md, Scheduler
// model: starvation freedom, and Priorities); the tests check the bounds
// on recorded traces.
//
// What a callback costs, beside a channel pool, is in BENCHMARKS.md.
//
// # Runs and their contexts
//
// A run is one call of a timer's callback, or the calls of a
// subscription's callback for a batch of its messages. Every callback gets
// its run's context first: done when the run returns, and when Shutdown's
// context ends (the drain deadline). A publication under it
// (subscribers.Publisher) is the callback's: it never waits, one that
// leaves a block queue at or above its threshold mutes exactly that
// callback after its run until the queue drains, and one that reaches an
// idle subscription is run next by the same worker (docs/design.md,
// Resources: whose publication). Nothing is inferred from goroutines or
// call stacks: a publication under any other context waits for room.
//
// # Callback groups
//
// Every callback belongs to a group: the one given with InGroup, or its
// owner's default group, mutually exclusive. Callbacks of a mutually
// exclusive group never overlap; a reentrant group lets different callbacks
// overlap. Groups never block a worker: see [Group].
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
// register new callbacks and publish. The Spin methods run callbacks on the caller's goroutine and
// must not be called during Run or concurrently.
package executor
