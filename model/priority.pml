/*
 * priority.pml: the run queue's priority rule (executor/priority.go,
 * executor/runqueue.go; waitset.Fast.TakeAhead, Fast.TakeWith, Fast.Hold,
 * Set.take), for spin. A model of its own beside executor.pml, of the
 * run queue and its choice only: no timers, groups, resources, muting,
 * parking or shutdown (executor.pml checks those without priorities).
 * README.md (Priorities) says what is modelled and checked.
 *
 * Subscriptions: L (priority 0; entity 0, and L1, entity 1, if NL = 2),
 * U1 (priority 1) and U2 (priority 2), urgent. U1 and U2 get messages for
 * ever, L LMSGS. dequeueLocked (with its holdLocked), under e.mu, is two
 * atomic steps, split where a push changes the stamps' order; a run is
 * Start (with its message taken) and Finish. Stamps are kept as ranks
 * among the stamp holders queued (the urgent lane's entries and the
 * batch): only their order is read, and the state space stays finite.
 *
 * Variants (cpp defines):
 *   NW            workers (default 1).
 *   NL            subscriptions of priority 0 (default 1: L; 2: L and L1).
 *   LMSGS, DEPTH  messages to each of them (2), every queue's depth (1).
 *   MAXSTREAK     maxStreak (16 in Go; default 2 here).
 *   LTL_STARVE    selects the ltl block starvation_free.
 *   NOBOUND       the streak and the bounds are not asserted.
 *   BUG_NO_STREAK pickLocked always takes the best, never the one queued
 *                 longest. Expected to fail.
 */

#ifndef NW
#define NW 1
#endif
#ifndef MAXSTREAK
#define MAXSTREAK 2
#endif
#ifndef NL
#define NL 1            /* of priority 0: entities 0 .. NL-1 (1 or 2) */
#endif
#define L 0
#define U1 NL
#define U2 (NL + 1)
#define NU 2            /* urgent subscriptions */
#define NE (NL + NU)
#ifndef LMSGS
#define LMSGS 2         /* messages delivered to each of priority 0 */
#endif
#ifndef DEPTH
#define DEPTH 1         /* each subscription's queue depth */
#endif
#define NONE 255

#define WAITING 0       /* waitset.State */
#define QUEUED 1
#define RUNNING 2

mtype = { Ready, Enqueue, Dequeue, Start, Finish, Accept };
#define EV(op, e) printf("MSC: %e %d\n", op, e)

byte prio[NE];          /* executor.Priority */

/* The wait set: each entity's state word, and the stacks of priority 0
 * (pending[1]) and of the urgent ones (pending[2]), drained oldest first. */
byte st[NE];
bool inset[NE];
chan pendS = [NL] of { byte };
chan pendU = [NU] of { byte };

/* The run queue: the batch's lane (runSubs) and the held list; the urgent
 * lane (priorities.urgent, in stamp order) and its stamps, batchAt and
 * streak (type priorities). */
chan laneS = [NL] of { byte };
chan held = [NL] of { byte };
byte urg[NU], nurg;
byte stamp[NE], stamps;
byte batchAt;           /* 0 while the batch's lane is empty */
byte streak;
byte requeue[NW];       /* worker.requeue */
bool mu;                /* e.mu, held across dequeueLocked's two steps */

/* The subscriptions' queues: messages queued, and L's deliveries. */
byte q[NE];
byte sentL[NL];

/* Ghosts, read only by assertions: the queued subscriptions in the order
 * they were queued (a batch's in its order); for each, the subscriptions
 * queued before it when it was queued, and the dequeues of others since;
 * the dequeues in a row that passed over the one queued longest; ready
 * (from its Ready to its Dequeue) and the dequeues of others since. */
byte gord[NE], ng;
byte before[NE], passed[NE];
byte gstreak;
bool rdy[NE];
byte waited[NE];

#ifdef NOBOUND
#define BOUND(c) skip
#else
#define BOUND(c) assert(c)
#endif
#define URGENT(e) (prio[e] > 0)
#define READY(e) (st[e] == QUEUED || st[e] == WAITING && inset[e])

/* Set.push: the entity entered waiting ∩ wait set, on its stack. */
inline push(e) {
	if :: URGENT(e) -> pendU!e :: else -> pendS!e fi;
	EV(Ready, e); rdy[e] = 1
}

/* Entity.take: waiting ∩ wait set to queued. */
inline take(e) {
	assert(st[e] == WAITING && inset[e]);
	st[e] = QUEUED; inset[e] = 0
}

/* Ghost: e is queued behind the ng subscriptions queued now. */
inline gEnqueue(e) {
	before[e] = ng; passed[e] = 0;
	gord[ng] = e; ng++;
	EV(Enqueue, e)
}

/* Ghost checks of x's dequeue: the choice (x is the one queued longest,
 * or urgent and of the highest priority queued, queued first among its
 * equals), the streak, and the bound: a subscription with k queued before
 * it is dequeued within (k+1)(MAXSTREAK+1) subscription dequeues of its
 * enqueue, its own included (at most that less one of others). And the
 * trace checker's bound from readiness (tracecheck's checkWait): at most
 * (2E-1)(MAXSTREAK+1) dequeues of others between a Ready and its Dequeue. */
inline gDequeue() {
	EV(Dequeue, x);
	j = 0;
	do
	:: j < NE && rdy[j] && j != x ->
		waited[j]++; BOUND(waited[j] <= (2 * NE - 1) * (MAXSTREAK + 1)); j++
	:: j < NE && !(rdy[j] && j != x) -> j++
	:: else -> break
	od;
	rdy[x] = 0; waited[x] = 0;
	i = 0;
	do :: gord[i] != x -> i++ :: else -> break od;
	j = 0;
	do
	:: j < ng ->
		y = gord[j];
		assert(i == 0 || URGENT(x) && (!URGENT(y) || prio[y] < prio[x] ||
			prio[y] == prio[x] && j >= i));
		if
		:: y != x -> passed[y]++; BOUND(passed[y] < (before[y] + 1) * (MAXSTREAK + 1))
		:: else
		fi;
		j++
	:: else -> break
	od;
	if :: i == 0 -> gstreak = 0 :: else -> gstreak++ fi;
	BOUND(gstreak <= MAXSTREAK);
#ifndef BUG_NO_STREAK
	assert(streak == gstreak);	/* Go's streak counts what the property does */
#endif
	do
	:: i + 1 < ng -> gord[i] = gord[i + 1]; i++
	:: else -> break
	od;
	ng--;
	gord[ng] = 0; before[x] = 0; passed[x] = 0;
	i = 0; j = 0; y = 0
}

/* A stamp leaves (its urgent entry dequeued, or the batch's lane
 * emptied): the later ones move down a rank. */
inline unstamp(s) {
	j = 0;
	do
	:: j < nurg -> if :: stamp[urg[j]] > s -> stamp[urg[j]]-- :: else fi; j++
	:: else -> j = 0; break
	od;
	if :: batchAt > s -> batchAt-- :: else fi;
	stamps--
}

/* Executor.takeUrgentLocked after Fast.TakeAhead (without timers: there
 * are none here): the urgent subscriptions pending join the urgent lane,
 * each with a stamp of its own. */
inline takeAhead() {
	do
	:: len(pendU) > 0 ->
		pendU?z; take(z);
		stamps++; stamp[z] = stamps;
		urg[nurg] = z; nurg++;
		gEnqueue(z)
	:: else -> z = 0; break
	od
}

/* Executor.takeBatchLocked: Fast.TakeWith takes the held subscriptions,
 * then the pending ones, into the batch's lane (empty here); the batch
 * gets one stamp. n counts them. */
inline takeBatch() {
	n = 0;
	do
	:: len(held) > 0 -> held?z; laneS!z; gEnqueue(z); n++
	:: else -> break
	od;
	do
	:: len(pendS) > 0 -> pendS?z; take(z); laneS!z; gEnqueue(z); n++
	:: else -> z = 0; break
	od;
	if :: n > 0 -> stamps++; batchAt = stamps :: else fi
}

/* The batch's head leaves its lane; the batch's stamp with the last. */
inline popBatch() {
	laneS?x;
	if :: len(laneS) == 0 -> unstamp(batchAt); batchAt = 0 :: else fi
}

/* Executor.pickLocked: the urgent entry of the highest priority (first
 * among equals), unless MAXSTREAK dequeues in a row passed over the one
 * queued longest: the batch's head if the batch is older than the urgent
 * lane's first entry (batchFirst), else that entry. */
inline pickLocked() {
	best = 0;
	j = 1;
	do
	:: j < nurg -> if :: prio[urg[j]] > prio[urg[best]] -> best = j :: else fi; j++
	:: else -> j = 0; break
	od;
	batchFirst = (len(laneS) > 0 && batchAt < stamp[urg[0]]);
	if
	:: best == 0 && !batchFirst -> streak = 0
#ifndef BUG_NO_STREAK
	:: !(best == 0 && !batchFirst) && streak >= MAXSTREAK ->
		streak = 0;
		if
		:: batchFirst -> popBatch()
		:: else -> best = 0
		fi
	:: !(best == 0 && !batchFirst) && streak < MAXSTREAK -> streak++
#else
	:: else	/* always the best: the streak is not kept */
#endif
	fi;
	if
	:: x == NONE ->
		x = urg[best];
		s = stamp[x];
		do
		:: best + 1 < nurg -> urg[best] = urg[best + 1]; best++
		:: else -> break
		od;
		nurg--;
		urg[nurg] = 0; stamp[x] = 0;
		unstamp(s)
	:: else
	fi;
	best = 0; batchFirst = 0; s = 0
}

/* Executor.popLocked(form) and popSubLocked: the urgent ones pending are
 * taken at every dequeue; with no urgent one queued, the batch's head;
 * with form, nothing (x = NONE) if the batch's lane is empty while
 * subscriptions of priority 0 wait, so that the batch is taken first;
 * else pickLocked's choice. */
inline popLocked(form) {
	x = NONE;
	takeAhead();
	if
	:: nurg == 0 -> if :: len(laneS) > 0 -> popBatch(); streak = 0 :: else fi
	:: nurg > 0 && form && len(laneS) == 0 && len(held) + len(pendS) + len(pendU) > 0
	:: else -> pickLocked()
	fi
}

/* Executor.holdLocked and Fast.Hold: what this worker finished ready
 * again goes back on the urgent stack if urgent, else to the held list,
 * after the subscriptions pending before it. */
inline holdLocked() {
	if
	:: requeue[me] != NONE ->
		y = requeue[me];
		requeue[me] = NONE;
		if
		:: URGENT(y) -> push(y)
		:: else ->
			do
			:: len(pendS) > 0 -> pendS?z; take(z); held!z
			:: else -> z = 0; break
			od;
			held!y; EV(Ready, y); rdy[y] = 1
		fi;
		y = 0
	:: else
	fi
}

/* Executor.dequeueLocked, in two steps under e.mu (mu): holdLocked and
 * popLocked(true); if that found nothing, the batch (takeBatchLocked) and
 * popLocked(false). The pushes are lock-free: one between the steps is
 * stamped after the batch (README.md, Priorities). */
inline dequeueFirst() {
	mu = 1;
	holdLocked();
	popLocked(1);
	if
	:: x != NONE -> gDequeue(); mu = 0
	:: else
	fi
}
inline dequeueBatch() {
	takeBatch();
	if
	:: n > 0 || nurg > 0 -> popLocked(0)
	:: else
	fi;
	n = 0;
	assert(x != NONE);	/* a worker looks only when there is work */
	gDequeue();
	mu = 0
}

/* A worker: Executor.next's section under e.mu; parking is a guard
 * (nothing to do: wait). Executor.run: Start (one message taken:
 * the number a run takes does not matter to the run queue), then Finish
 * with Fast.FinishHeld: ready again if messages are left or it was
 * triggered meanwhile; an urgent one stays waiting ∩ wait set, one of
 * priority 0 is queued; the worker keeps it in requeue. */
proctype worker(byte me) {
	byte x = NONE, y, z, i, j, n, s, best;
	bool batchFirst;
	do
	:: atomic {
		!mu && (requeue[me] != NONE || len(pendS) + len(pendU) + len(held) + len(laneS) + nurg > 0) ->
		dequeueFirst()
	   }
		if
		:: x == NONE -> atomic { dequeueBatch() }
		:: else
		fi;
		atomic { assert(st[x] == QUEUED); st[x] = RUNNING; EV(Start, x); q[x]-- }
		atomic {
			EV(Finish, x);
			inset[x] = (inset[x] || q[x] > 0);
			st[x] = WAITING;
			if
			:: inset[x] && !URGENT(x) -> st[x] = QUEUED; inset[x] = 0; requeue[me] = x
			:: inset[x] && URGENT(x) -> requeue[me] = x
			:: else
			fi;
			x = NONE
		}
	od
}

/* Subscription.Deliver, Block policy (the caller waits while the queue is
 * full): a message into an empty queue triggers the subscription
 * (Entity.Trigger). */
inline deliver(e) {
	q[e]++;
	EV(Accept, e);
	if
	:: q[e] == 1 && !inset[e] && st[e] == WAITING -> push(e)
	:: else
	fi;
	inset[e] = (inset[e] || q[e] == 1)
}

/* The sources: U1 and U2 get messages for ever, each of priority 0 LMSGS. */
proctype source() {
	do
	:: atomic { q[U1] < DEPTH -> deliver(U1) }
	:: atomic { q[U2] < DEPTH -> deliver(U2) }
	:: atomic { sentL[0] < LMSGS && q[0] < DEPTH -> deliver(0); sentL[0]++ }
#if NL > 1
	:: atomic { sentL[1] < LMSGS && q[1] < DEPTH -> deliver(1); sentL[1]++ }
#endif
	od
}

init {
	byte i;
	atomic {
		prio[U1] = 1; prio[U2] = 2;
		do
		:: i < NW -> requeue[i] = NONE; run worker(i); i++
		:: else -> break
		od;
		run source()
	}
}

/* starvation_free on the priorities: a subscription that is ready
 * (pending, held, queued, or finished ready again) eventually runs, while
 * U1 and U2 get messages for ever. Searched for acceptance cycles under
 * weak fairness (pan -a -f). */
#define RUNS(e) [](READY(e) -> <>(st[e] == RUNNING))
#if defined(LTL_STARVE) && NL > 1
ltl starvation_free { RUNS(L) && RUNS(1) && RUNS(U1) && RUNS(U2) }
#elif defined(LTL_STARVE)
ltl starvation_free { RUNS(L) && RUNS(U1) && RUNS(U2) }
#endif
