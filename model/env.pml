/*
 * env.pml: what drives the executor: the timer queue's alarm, a message
 * source, Run's stop, and the check of the drain at the end.
 */

/* A source counts what it sent. With FOREVER, S0's source sends for ever
 * (a busy subscription), and with TFOREVER the timers fire for ever: their
 * counts above 0 in the workload then only say that they send at all. */
#ifdef FOREVER
#define COUNTS0(n) skip
#else
#define COUNTS0(n) n++
#endif
#ifdef TFOREVER
#define COUNTT(n) skip
#else
#define COUNTT(n) n++
#endif

/* With TFOREVER a timer fires again only after a subscription's callback has
 * started since its last firing (tick, set in runMessages): its period is
 * longer than a callback. The executor's bound holds while the timers'
 * load leaves the workers time; a timer firing with no time passing would
 * take every worker. */
#ifdef TFOREVER
#define PACED(t) tick[t]
#define UNTICK(t) tick[t] = 0
#else
#define PACED(t) 1
#define UNTICK(t) skip
#endif

/* The timer queue's alarm (timerq.Queue) triggering each timer FIRES times
 * (Set.TriggerAll with the wake-up), until timerq.Queue.Stop. */
proctype timerSource() {
	byte v, f0, f1;
	bool ready;
	do
	:: atomic { !tstopped && f0 < T0FIRES && PACED(T0) -> UNTICK(T0); COUNTT(f0); enterPush(T0) }
		if
		:: ready -> ready = 0; wake()
		:: else
		fi
	:: atomic { !tstopped && f1 < T1FIRES && PACED(T1) -> UNTICK(T1); COUNTT(f1); enterPush(T1) }
		if
		:: ready -> ready = 0; wake()
		:: else
		fi
	:: tstopped || (f0 == T0FIRES && f1 == T1FIRES) -> break
	od;
	sourcesDone++
}

/* Subscription.Deliver of one message to e, Block policy: it waits while
 * the queue is full (the condition variable is a guard here); a closed
 * subscription refuses it (a drop, reason closed). */
inline deliver(e) {
	atomic {
		closed[SUB(e)] || seq[SUB(e)] - taken[SUB(e)] < DEPTH;
		if
		:: closed[SUB(e)] -> EV(Drop, e); ready = 0
		:: else ->
			seq[SUB(e)]++;
			EVS(Accept, e, seq[SUB(e)]);
			if
			:: seq[SUB(e)] - taken[SUB(e)] == 1 -> enterPush(e)
			:: else -> ready = 0
			fi
		fi
	}
	if
	:: ready -> ready = 0; wake()
	:: else
	fi
}

/* A source delivering the workload's messages, in any interleaving. */
proctype messageSource() {
	byte v, n0, n1, n2;
	bool ready;
	do
	:: n0 < S0MSGS -> deliver(S0); COUNTS0(n0)
	:: n1 < S1MSGS -> deliver(S1); n1++
	:: n2 < S2MSGS -> deliver(S2); n2++
	:: else -> break
	od;
	sourcesDone++
}

/* Executor.stop, at any moment of the run: the timers stop, the
 * subscriptions close, and the workers drain and retire. */
proctype stopper() {
#ifdef LATE_STOP
	sourcesDone == 2;
#endif
	atomic { state = S_CLOSING; tstopped = 1 }
	atomic { closed[0] = 1; closed[1] = 1; closed[2] = 1 }
	atomic { !mu -> state = S_DRAINING; wakeAll() }	/* under e.mu */
}

/* Seed 000's Termination as the executor's drain: every entity is back in
 * waiting with no trigger left, every accepted message ran, in order, and
 * every count is back to zero. */
inline drained() {
	assert(state == S_DRAINED && live == 0);
	i = 0;
	do
	:: i < NE -> assert(st[i] == WAITING && !inset[i] && !muted[i] && mutor[i] == NONE); i++
	:: else -> break
	od;
	i = 0;
	do
	:: i < NS -> assert(taken[i] == seq[i] && lastrun[i] == seq[i] && mutees[i] == 0); i++
	:: else -> break
	od;
	assert(timersWaiting == 0 && laneTimers == 0 && !due[T0] && !due[T1]);
	assert(gsched[0] == 0 && gsched[1] == 0 && len(gq[0]) == 0 && len(gq[1]) == 0);
	assert(len(rq[0]) == 0 && len(rq[1]) == 0);
	assert(len(pendT) + len(pendS) + len(laneT) + len(laneS) + len(held) == 0)
}
