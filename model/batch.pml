/*
 * batch.pml: a subscription's run and a callback's publications
 * (executor/batch.go, executor/publisher.go): runMessages with batchEnds,
 * the unmute in TakeInto, PublishMessage's quiet trigger and the mute at
 * the end of a run. Included by worker.pml; inlines use the worker's
 * locals.
 */

/* The unmute, in bus.TakeInto, of each entity muted until the queue
 * drained: if it waits in the wait set, it is ready (Entity.Unmute). */
inline unmuteAll() {
	do
	:: unm != 0 ->
		atomic {
			z = 0;
			do
			:: !(unm & (1 << z)) -> z++
			:: else -> break
			od;
			unm = unm ^ (1 << z);
			EV(Unmute, z);
			muted[z] = 0;
			ready = (st[z] == WAITING && inset[z]);
			if
			:: ready -> push(z)
			:: else
			fi;
			z = 0
		}
		if
		:: ready -> ready = 0; wake()
		:: else
		fi
	:: else -> break
	od
}

/* Executor.batchEnds, its loads as steps of their own, in Go's order
 * (since d5a4464): the budget (any check may find it spent), the wait set
 * (TimersPending), then timersWaiting. BUG_BATCHENDS_LOADS reads
 * timersWaiting first, as before d5a4464. The ghost seenBy marks the
 * timers due at the first load: the batch stop fails if the batch goes on
 * while a timer was due all through the check (one that falls due between
 * the loads may be missed, as one that falls due just after). */
#ifdef BUG_BATCHENDS_LOADS
#define LOAD1 (timersWaiting != 0)
#define LOAD2 (len(pendT) > 0)
#else
#define LOAD1 (len(pendT) > 0)
#define LOAD2 (timersWaiting != 0)
#endif
#define SEEN(t) (due[t] && ((seenBy[t] >> me) & 1))
inline batchEnds() {
	atomic {
		if
		:: ends = 1	/* the run has lasted its budget */
		:: ends = LOAD1
		fi;
		if
		:: !ends ->
			seenBy[T0] = seenBy[T0] | (due[T0] -> 1 << me : 0);
			seenBy[T1] = seenBy[T1] | (due[T1] -> 1 << me : 0)
		:: else
		fi
	}
	if
	:: !ends ->
		atomic {
			ends = LOAD2;
			if
			:: !ends -> assert(!SEEN(T0) && !SEEN(T1))
			:: else
			fi;
			seenBy[T0] = seenBy[T0] & ~(1 << me);
			seenBy[T1] = seenBy[T1] & ~(1 << me)
		}
	:: else
	fi
}

/* Executor.runMessages: a batch of up to b messages, in order, ending
 * early when the budget is spent (any check may say so) or a timer is
 * due (batchEnds). */
inline runMessages() {
	atomic { s = SUB(x); k = 1; b = (nres[x] > 0 -> 1 : BATCH) }
	do
	:: true ->
		atomic {	/* bus.TakeInto */
			unm = 0;
			if
			:: seq[s] > taken[s] ->
				taken[s]++;
				m = taken[s];
				ok = 1;
				more = (seq[s] > taken[s]);
				if
				:: mutees[s] != 0 && seq[s] - taken[s] < DEPTH ->
					unm = mutees[s];
					mutees[s] = 0
				:: else
				fi
			:: else -> ok = 0; more = 0; m = 0
			fi
		}
		unmuteAll();
		atomic {	/* the Start or Next step, and the callback */
			if
			:: k == 1 -> EVS(Start, x, m)
			:: else -> EVS(Next, x, m)
			fi;
			assert(!ok || m == lastrun[s] + 1);	/* FIFO, none lost */
			lastrun[s] = m;
#ifdef TFOREVER
			tick[T0] = 1;	/* time passes: the timers may fire again */
			tick[T1] = 1;
#endif
#ifdef ENDLESS
			/* numbers relative to the last message run, so that an
			 * endless workload has finitely many states */
			seq[s] = seq[s] - taken[s];
			taken[s] = 0;
			lastrun[s] = 0;
#endif
			if
			:: !ok || !more || k >= b -> ends = 1
			:: else
			fi
		}
		if
		:: ends -> break
		:: else ->
			batchEnds();
			if
			:: ends -> break
			:: else
			fi
		fi;
		k++
	od;
	atomic { s = 0; k = 0; b = 0; m = 0; ok = 0; ends = 0 }
}

/* Publisher.PublishMessage under T1's run context (bus.Run): the run's
 * publication, quiet (the hand-off: no wake-up), never waiting; at or
 * above the threshold the run records the overloaded subscription. */
inline publishOne() {
	atomic {
		if
		:: closed[SUB(S2)] -> EV(Drop, S2)
		:: else ->
			seq[SUB(S2)]++;
			EVS(Accept, S2, seq[SUB(S2)]);
			if
			:: seq[SUB(S2)] - taken[SUB(S2)] == 1 -> enterPush(S2)
			:: else
			fi;
			if
			:: seq[SUB(S2)] - taken[SUB(S2)] >= DEPTH && mutor[x] == NONE -> mutor[x] = S2
			:: else
			fi
		fi;
		ready = 0
	}
}

/* run's tail: Run.End's overloaded subscription, Executor.mute and
 * bus.MuteUntilDrained (seed 002's PostRun). */
inline muteAfterRun() {
	if
	:: mutor[x] != NONE ->
		atomic { s2 = mutor[x]; mutor[x] = NONE }
		if
		:: !isTimer(x) && (x == s2 || seq[SUB(x)] - taken[SUB(x)] >= DEPTH)
		:: else ->
			atomic {
				if
				:: seq[SUB(s2)] - taken[SUB(s2)] >= DEPTH ->
					muted[x] = 1;
					mutees[SUB(s2)] = mutees[SUB(s2)] | (1 << x);
					EV(Mute, x)
				:: else
				fi
			}
		fi;
		s2 = 0
	:: else
	fi
}

