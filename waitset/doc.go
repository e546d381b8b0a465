// Package waitset holds the entities of an executor that are ready to run:
// the wait set of the scheduler model (seed 000).
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
// run, never lost and never run twice at once. (A subscription that a
// scheduler holds with [Entity.FinishHeld] and [Set.Hold] is queued at
// once: a trigger then counts as one during a run.)
//
// The seed's wait set is never emptied; this package follows its evident
// intent: the scheduler removes what it takes.
//
// # Concurrency
//
// Triggering is lock-free (one atomic operation on the entity, and a
// compare-and-swap push when the entity enters waiting ∩ wait set) and safe
// from any goroutine. [Set.Take] may be called by many goroutines at once;
// each entity is handed to exactly one of them. [List] is not safe for
// concurrent use; its owner guards it.
package waitset
