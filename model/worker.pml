/*
 * worker.pml: a worker goroutine (executor/worker.go, batch.go,
 * publisher.go; Executor.work and Executor.next).
 */

/* timerStarts: x, a timer, is committed to start (or to wait for a
 * resource): it no longer holds batches back. */
inline timerStarts() {
	if
	:: isTimer(x) ->
		atomic {
#ifndef BUG_F68617A
			timersWaiting--;
#endif
			due[x] = 0
		}
	:: else
	fi
}

/* Executor.takeRunnable: a request that this worker's release completed
 * runs before new work; a timer counts as waiting until it starts. */
inline takeRunnable() {
	if
	:: len(runnable[me]) > 0 ->
		atomic {
			runnable[me]?x;
#ifndef BUG_F68617A
			if
			:: isTimer(x) -> timersWaiting++
			:: else
			fi
#endif
		}
		if
		:: requeue[me] != NONE -> atomic { !mu -> holdLocked() }
		:: else
		fi
	:: else
	fi
}

#include "batch.pml"

/* Executor.run: Start, the callback or a batch of messages, the mute, the
 * release, Finish; with hold, Fast.FinishHeld (the worker holds x if it is
 * ready again), else Entity.Finish. Expanded once, at dispatch's label runit
 * (so that pan.c, and gcc's time, stay small); its last step goes back to
 * the caller: runGroup (hold 0), dispatch's claimed group (claimed), or
 * the worker's loop. */
inline runEntity() {
	atomic {	/* Entity.Start, with the exclusion checks */
		assert(st[x] == QUEUED);
		st[x] = RUNNING;
		if
		:: grp[x] != NONE -> assert(grun[grp[x]] == NONE); grun[grp[x]] = x
		:: else
		fi;
		i = 0;
		do
		:: i < nres[x] ->	/* RunningImplication, UniqueAcquisition */
			r = RES(x, i);
			assert(len(rq[r]) > 0);
			rq[r]?<z>;
			assert(z == x && holder[r] == NONE);
			holder[r] = x;
			i++
		:: else -> break
		od;
		i = 0; r = 0; z = 0;
		more = 0;
		if
		:: isTimer(x) -> EV(Start, x)	/* observed after timer.Call */
		:: else
		fi
	}
	if
	:: isTimer(x) && x == T1 ->	/* T1's callback publishes PUBN messages */
		k = 0;
		do
		:: k < PUBN -> publishOne(); k++
		:: else -> k = 0; break
		od
	:: isTimer(x) && x != T1
	:: else -> runMessages()
	fi;
	muteAfterRun();
	if
	:: nres[x] > 0 -> release()
	:: else
	fi;
	atomic {	/* Finish, then FinishHeld or Finish */
		EV(Finish, x);
		if
		:: grp[x] != NONE -> grun[grp[x]] = NONE
		:: else
		fi;
		assert(st[x] == RUNNING);
		if
		:: more -> inset[x] = 1
		:: else
		fi;
		st[x] = WAITING;
		ready = (inset[x] && !muted[x]);
		if
		:: ready && hold ->
			if
			:: !isTimer(x) -> st[x] = QUEUED; inset[x] = 0
			:: else
			fi;
			assert(requeue[me] == NONE);
			requeue[me] = x;
			ready = 0
		:: ready && !hold -> push(x)
		:: else
		fi
	}
	if
	:: ready -> ready = 0; wake()
	:: else
	fi;
	atomic {
		i = 0; r = 0; r2 = 0; nx = 0; ok2 = 0; atHead2 = 0; more = 0; ready = 0;
		if
		:: !hold -> goto groupNext
		:: hold && claimed -> goto claimedNext
		:: else -> goto look
		fi
	}
}

/* Executor.dispatch: acquire x's resources, then run x, or claim its group
 * (seed 001's scheduled counter) and run it, or queue it on the group for
 * the worker that holds it; Executor.runGroup (at label group): run the
 * callbacks queued on group g, which this worker holds, until none is
 * left. Expanded once: its labels are the worker's. */
inline dispatch() {
	if
	:: nres[x] > 0 && !adone[x] ->
		acquire();
		if
		:: !ok -> timerStarts(); goto look
		:: else
		fi
	:: else
	fi;
	atomic { g = grp[x]; hold = 1 }
	if
	:: g == NONE -> timerStarts(); goto runit
	:: else ->
		atomic {
			claimed = (gsched[g] == 0);
			if
			:: claimed -> gsched[g] = 1
			:: else
			fi
		}
		if
		:: claimed ->
			timerStarts();
			goto runit;
claimedNext:
			atomic { gsched[g]--; c = gsched[g]; claimed = 0 }
			if
			:: c != 0 ->
				atomic { !mu -> holdLocked() }
				goto group
			:: else
			fi
		:: else ->
#ifdef BUG_F68617A
			atomic {
				if
				:: isTimer(x) -> timersWaiting++
				:: else
				fi
			}
#endif
			gq[g]!x;
			atomic { gsched[g]++; c = gsched[g] }
			if
			:: c == 1 -> goto group
			:: else
			fi
		fi
	fi;
	goto look;
group:
	do
	:: true ->
		atomic {
			gq[g]?y;
			if
			:: isTimer(y) -> due[y] = 0
			:: else
			fi
		}
		atomic {
			if
			:: isTimer(y) -> timersWaiting--
			:: else
			fi
		}
		atomic { x = y; y = 0; hold = 0 }
		goto runit;
groupNext:
		atomic { gsched[g]--; c = gsched[g] }
		if
		:: c == 0 -> break
		:: else
		fi;
		if
		:: len(pendT) + len(pendS) > 0 -> wake()
		:: else
		fi
	od;
	goto look;
runit:
	runEntity()
}

/* The end of Executor.next's section under e.mu: dequeueLocked's
 * Dequeue, then, with nothing to run, retireLocked or parkLocked's push;
 * e.mu is released (mu). */
inline nextTail() {
	dequeued();
	delta = 0;
	z = 0;
	parked = 0;
	if
	:: x != NONE
	:: else ->
		if
		:: state >= S_DRAINING && (state == S_DRAINED || nidle == live - 1) ->
			state = S_DRAINED;	/* retireLocked */
			live--;
			wakeAll();
			retired = 1
		:: else ->
			assert(nidle < IDLECAP);	/* the model's bound on the slice */
#ifdef IDLE_UNIQUE
			j = 0;	/* a worker parks at most once */
			do
			:: j < nidle -> assert(idle[j] != me); j++
			:: else -> j = 0; break
			od;
#endif
			idle[nidle] = me;	/* parkLocked */
			nidle++;
			parked = 1
		fi
	fi;
	mu = 0
}

/* A worker goroutine: Executor.work, with Executor.next and its parking
 * (waitLocked's park, parkLocked) and retiring (retireLocked). */
/* GUARD_TAKEWITH, the Go code since the TakeWith fix (dequeueLocked and
 * Fast.TakeWith): if a timer is pending, timersWaiting.Add(1) before
 * TakeWith drains it, Add(-1) after the popLocked that follows it has
 * counted the lane, so that a batch check on another worker finds a timer
 * that TakeWith drained either pending or counted. With none pending,
 * TakeWith takes no timer and counts nothing (guarded stays 0): a count on
 * every look for work ended other workers' batches for no timer. */
#ifdef GUARD_TAKEWITH
#define GUARD_ON	if :: len(pendT) > 0 -> guarded = 1; timersWaiting++ :: else fi
#define GUARD_OFF	if :: guarded -> guarded = 0; timersWaiting-- :: else fi
#else
#define GUARD_ON	skip
#define GUARD_OFF	skip
#endif

proctype worker(byte me) {
	byte x, y, z, v, c, g, k, m, r, r2, nx, i, j, b, s, s2, unm;
	bool more, ok, ok2, atHead, atHead2, ready, ends, claimed, hold, parked, retired, taking, again, guarded;
	short delta;
look:
	atomic {	/* every local dead here: no stale value splits states */
		x = NONE; y = 0; z = 0; v = 0; c = 0; g = 0; k = 0; m = 0; r = 0; r2 = 0; nx = 0;
		i = 0; j = 0; b = 0; s = 0; s2 = 0; unm = 0; delta = 0;
		more = 0; ok = 0; ok2 = 0; atHead = 0; atHead2 = 0; ready = 0; ends = 0;
		claimed = 0; hold = 0; parked = 0
	}
	takeRunnable();
	do
	:: x != NONE -> break
	:: else ->
		/* Executor.next's section under e.mu: dequeueLocked, in the
		 * steps popLocked takes (wait.pml), then retire or park. */
		atomic {
			!mu -> mu = 1;
			holdLocked();
			popCheck();
			if
			:: !taking ->
				popRest();
#ifdef SPLIT_TAKEWITH
				if
				:: !again -> nextTail()
				:: else
				fi
#else
				nextTail()
#endif
			:: else
			fi
		}
		if
		:: taking ->
			popSwap();
			atomic { popAdd(); nextTail() }
		:: else
		fi;
#ifdef SPLIT_TAKEWITH
		if
		:: again ->	/* TakeWith, then its popLocked if it took any */
			atomic {
				again = 0;
				GUARD_ON;
				takeWith();
				if
				:: len(laneT) + len(laneS) > 0 -> again = 1
				:: else -> GUARD_OFF; nextTail()
				fi
			}
			if
			:: again ->
				atomic {
					again = 0;
					popCheck();
					if
					:: !taking -> popAdd(); GUARD_OFF; nextTail()
					:: else
					fi
				}
				if
				:: taking -> popSwap(); atomic { popAdd(); GUARD_OFF; nextTail() }
				:: else
				fi
			:: else
			fi
		:: else
		fi;
#endif
		if
		:: x != NONE && more -> more = 0; wake()
		:: x != NONE && !more -> parked = 0
		:: retired -> goto done
		:: parked ->	/* parkLocked's second look, then <-w.wake */
			if
			:: len(pendT) + len(pendS) > 0 ->
				atomic {
					!mu -> unpark(me);
#ifndef BUG_IDLE_TWICE
					/* not on the stack: popped, so signalled; the token
					 * is this worker's to take (takeBack) */
					if
					:: j == NONE -> wakech[me]?_
					:: else
					fi;
#endif
					j = 0
				}
			:: else -> wakech[me]?_
			fi
		fi
	od;
	dispatch();	/* ends with a goto look */
done:
	skip
}
