/*
 * wait.pml: the wait set (package waitset), the run queue and the idle
 * stack (executor/runqueue.go, executor/park.go).
 *
 * Inlines use the locals of their caller: z (an entity), v (a worker),
 * ready, delta, j.
 */

/* Set.push: the entity entered waiting ∩ wait set. A timer is due from now
 * until a worker commits to start it (the ghost due). */
inline push(e) {
	if
	:: isTimer(e) -> pendT!e; due[e] = 1; seenBy[e] = 0
	:: else -> pendS!e
	fi;
	EV(Ready, e);
	rdy[e] = 1
}

/* The starvation bound, counted in dequeues as the trace checker counts it
 * (tracecheck's starvation): between an entity's Ready and its Dequeue, the
 * other entities of its lane dequeued. The executor states at most T-1
 * timers for a timer and E-1 subscriptions for a subscription; the model
 * asserts the tighter NT-1 and NS-1 (the run queue holds each entity at
 * most once, and Hold keeps readiness order). */
inline passBy(e) {
	j = (isTimer(e) -> 0 : NT);
	do
	:: j < (isTimer(e) -> NT : NE) ->
		if
		:: j != e && rdy[j] ->
			passed[j]++;
#ifndef NOBOUND
			assert(passed[j] <= (isTimer(e) -> NT - 1 : NS - 1))
#endif
		:: else
		fi;
		j++
	:: else -> j = 0; break
	od;
	rdy[e] = 0;
	passed[e] = 0
}

/* Entity.enter and Set.push, without the wake-up (Fast.TriggerQuiet);
 * ready says whether the trigger made the entity ready. */
inline enterPush(e) {
	ready = (!inset[e] && !muted[e] && st[e] == WAITING);
	inset[e] = 1;
	if
	:: ready -> push(e)
	:: else
	fi
}

/* Entity.take: waiting ∩ wait set to queued, as part of a batch. */
inline take(e) {
	assert(st[e] == WAITING && inset[e]);
	st[e] = QUEUED;
	inset[e] = 0
}

/* worker.signal: a non-blocking send on the worker's wake channel. */
inline signal(w2) {
	if
	:: len(wakech[w2]) == 0 -> wakech[w2]!1
	:: else
	fi
}

/* Executor.popIdle: the most recently parked worker, or NONE. */
inline popIdle() {
	if
	:: nidle > 0 -> nidle--; v = idle[nidle]; idle[nidle] = NONE
	:: else -> v = NONE
	fi
}

/* Executor.wake: unpark one idle worker, if any. nidle is read without the
 * lock; the pop (under e.mu) and the signal are one step. */
inline wake() {
	if
	:: nidle == 0
	:: else ->
		atomic {
			!mu -> popIdle();
			if
			:: v != NONE -> signal(v)
			:: else
			fi;
			v = 0
		}
	fi
}

/* Executor.unpark: remove worker me from the idle stack if it is there;
 * j is NONE if it was not. */
inline unpark(me) {
	j = 0;
	do
	:: j < nidle && idle[j] != me -> j++
	:: else -> break
	od;
	if
	:: j < nidle ->
		do
		:: j + 1 < nidle -> idle[j] = idle[j + 1]; j++
		:: else -> break
		od;
		nidle--;
		idle[nidle] = NONE;
		j = 0
	:: else -> j = NONE
	fi
}

/* Executor.wakeAllLocked: empty the idle stack, waking every worker on it. */
inline wakeAll() {
	do
	:: nidle > 0 -> nidle--; signal(idle[nidle]); idle[nidle] = NONE
	:: else -> break
	od
}

/* Fast.TakeAhead's timers: the pending timers become a batch of their own in the
 * timer lane. */
inline takeTimers() {
	do
	:: len(pendT) > 0 -> pendT?z; take(z); laneT!z; EV(Enqueue, z)
	:: else -> break
	od
}

/* Fast.TakeWith: one batch of the pending timers, then the held
 * subscriptions (queued already), then the pending subscriptions. With
 * FIX_TAKEWITH (a candidate fix, not in Go) it leaves the timers to the
 * popLocked after it, which counts them before it takes them. */
inline takeWith() {
#ifndef FIX_TAKEWITH
	takeTimers();
#endif
	do
	:: len(held) > 0 -> held?z; laneS!z; EV(Enqueue, z)
	:: else -> break
	od;
	do
	:: len(pendS) > 0 -> pendS?z; take(z); laneS!z; EV(Enqueue, z)
	:: else -> break
	od
}

/* Executor.popLocked, in the steps that batchEnds on another worker can
 * fall between (it holds no lock): popCheck, popSwap, popAdd. The caller
 * holds e.mu (mu) across them. popLocked takes the head of the timer lane,
 * after taking the pending timers into it, else the head of the
 * subscriptions' lane; the lane's change goes into timersWaiting, with a
 * taken timer still counted until it starts (since f68617a). */

/* popLocked's first step: TimersPending, and, since d5a4464, the timers
 * about to be taken counted (timersWaiting.Add(1)) before they leave the
 * wait set. taking says whether TakeAhead takes timers. */
inline popCheck() {
	taking = (len(pendT) > 0);
#if !defined(BUG_BATCHENDS_LOADS) && !defined(BUG_NO_PRECOUNT)
	if
	:: taking -> timersWaiting++
	:: else
	fi
#endif
}

/* popLocked's Fast.TakeAhead: the swap of the timers' stack, a step of
 * its own (only the holder of e.mu empties the stack, so it is not empty). */
inline popSwap() {
	atomic { takeTimers() }
}

/* popLocked's last step: the pop, and one Add of the delta, which takes
 * back the pre-count. */
inline popAdd() {
	x = NONE;
	if
	:: len(laneT) > 0 -> laneT?x
	:: else
	fi;
	delta = len(laneT) - laneTimers;
#if !defined(BUG_BATCHENDS_LOADS) && !defined(BUG_NO_PRECOUNT)
	if
	:: taking -> delta--
	:: else
	fi;
#endif
#ifndef BUG_F68617A
	if
	:: x != NONE -> delta++
	:: else
	fi;
#endif
	timersWaiting = timersWaiting + delta;
	laneTimers = len(laneT);
	taking = 0;
	if
	:: x == NONE && len(laneS) > 0 -> laneS?x
	:: else
	fi
}

/* Executor.holdLocked and Fast.Hold: the entity this worker finished ready
 * again goes to the held list (a timer to the timers' stack), after the
 * subscriptions pending before it. */
inline holdLocked() {
	if
	:: requeue[me] != NONE ->
		y = requeue[me];
		requeue[me] = NONE;
		if
		:: isTimer(y) -> push(y)
		:: else ->
#ifdef BUG_HOLD_AHEAD
			/* the subscription goes back to the head of the
			 * subscriptions' lane, ahead of those queued and pending */
			laneS!y;
			EV(Ready, y);
			rdy[y] = 1;
			EV(Enqueue, y);
			j = len(laneS) - 1;
			do
			:: j > 0 -> laneS?z; laneS!z; j--
			:: else -> break
			od
#else
			do
			:: len(pendS) > 0 -> pendS?z; take(z); held!z
			:: else -> break
			od;
			held!y;
			EV(Ready, y);
			rdy[y] = 1
#endif
		fi
	:: else
	fi
}

/* The tail of Executor.dequeueLocked, in its last step: the Dequeue, and
 * more, whether more work is ready. Timers first: a subscription is taken
 * only when no timer is pending or queued. */
inline dequeued() {
	if
	:: x != NONE ->
		EV(Dequeue, x);
		assert(isTimer(x) || (len(laneT) == 0 && len(pendT) == 0));
		passBy(x)
	:: else
	fi;
	more = (len(laneT) + len(laneS) + len(held) + len(pendT) + len(pendS) > 0)
}

/* The rest of dequeueLocked after a popLocked that took no timer: with the
 * run queue empty, Fast.TakeWith (which drains the timers' stack too, with
 * no pre-count) and popLocked again. By default this is one step with the
 * popLocked before it, so no timer can be pushed between that popLocked's
 * look at the wait set and TakeWith. With SPLIT_TAKEWITH the step ends
 * here and again says that TakeWith follows (worker.pml; README.md: the
 * window d5a4464 leaves). */
inline popRest() {
	popAdd();
#ifdef SPLIT_TAKEWITH
	again = (x == NONE)
#else
	if
	:: x == NONE ->
		takeWith();
		popCheck();	/* false: TakeWith emptied the stack in this step */
		popAdd()
	:: else
	fi
#endif
}
