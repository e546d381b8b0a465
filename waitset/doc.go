// Package waitset holds the entities of an executor that are ready to run:
// the wait set of the scheduler model (docs/design.md, Scheduler model, in
// the repository).
//
// Every timer and every subscription embeds an [Entity]. An entity is in
// exactly one of three states at a time: waiting, queued or running. A
// trigger (a timer expiry, a message arrival) adds the entity to the wait set
// with set semantics: a second trigger before the scheduler takes the entity
// adds nothing. The scheduler takes waiting ∩ wait set as one batch with
// [Set.Take], all timers first, then all subscriptions, and moves them to
// queued. A worker marks an entity running with [Entity.Start] and returns it
// to waiting with [Entity.Finish]; a trigger that arrived while the entity was
// queued or running keeps it in the wait set, so it is taken again after the
// run, never lost and never run twice at once.
//
// The model's wait set is never emptied; this package follows its evident
// intent: the scheduler removes what it takes.
//
// # The executor's fast path
//
// Package executor, and packages timers and subscribers on its behalf, take
// some steps by a faster path, grouped in [Fast] (see [Set.Fast]): triggers
// without the wake-up, for work that the triggering worker takes itself (the
// hand-off of docs/design.md, Idle workers and hand-off), a finished
// subscription held in the executor's own list instead of the set's stack,
// and timers taken as a batch of their own, ahead of queued subscriptions.
// They keep the states and events of the model, with one difference: a
// subscription that a worker holds is queued at once, so that a trigger then
// counts as one during a run. Any other scheduler needs none of them.
//
// # Concurrency
//
// Triggering is lock-free (one atomic operation on the entity, and a
// compare-and-swap push when the entity enters waiting ∩ wait set) and safe
// from any goroutine. [Set.Take] may be called by many goroutines at once;
// each entity is handed to exactly one of them, and so may [Fast.TakeWith]
// and [Fast.TakeTimers]; the quiet triggers of [Fast] are as safe as
// Trigger. [List] is not safe for concurrent use; its owner guards it, and
// the held list of [Fast.Hold] and [Fast.TakeWith] with it.
package waitset
