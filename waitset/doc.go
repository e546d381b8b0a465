// Package waitset holds the entities of a scheduler that are ready to run:
// the wait set of the scheduler model (docs/design.md, Scheduler model, in
// the repository), on which robotexec's executor is built, and on which a
// program can build a scheduling loop of its own (Example_loop: one
// goroutine, a timer of package timers and a subscription of package
// subscribers).
//
// Every timer and every subscription holds an [Entity]. An entity is in
// exactly one of three states at a time: waiting, queued or running. A
// trigger (a timer's deadline, a message into an empty queue) adds the
// entity to the wait set with set semantics: a second trigger before the
// scheduler takes the entity adds nothing. The scheduler takes waiting ∩
// wait set as one batch with [Set.Take], all timers first, then all
// subscriptions, and moves them to queued. A worker marks an entity
// running with [Entity.Start] and returns it to waiting with
// [Entity.Finish]; a trigger that arrived while the entity was queued or
// running keeps it in the wait set, so it is taken again after the run,
// never lost and never run twice at once.
//
// A subscription marked urgent ([Entity.SetUrgent]) is taken after the
// timers and before the other subscriptions.
//
// [Set.Fast] is the executor's faster path for a pool of workers: triggers
// without a wake-up, for work that the triggering worker takes itself, a
// finished subscription held in the executor's own list, and timers and
// urgent subscriptions taken as a batch of their own ([Fast.TakeAhead]). A
// loop on one goroutine needs none of it.
//
// # Concurrency
//
// Triggering is lock-free (one atomic operation on the entity, and a
// compare-and-swap push when the entity enters waiting ∩ wait set) and safe
// from any goroutine. [Set.Take] may be called by many goroutines at once;
// each entity is handed to exactly one of them. [List] is not safe for
// concurrent use; its owner guards it.
package waitset
