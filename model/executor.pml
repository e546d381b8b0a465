/*
 * executor.pml: the dispatch protocol of package executor, for spin.
 *
 * Each inline and proctype names the Go function it stands for; each step
 * that the executor records is tagged with the trace checker's event kind
 * (waitset.Op: ready, enqueue, dequeue, start, next, finish, accept, drop,
 * request, acquire, release, mute, unmute) in a printf, so that a trail
 * reads as a recorded trace. README.md says what is modelled, at which
 * bounds, and what is not.
 *
 * Variants (cpp defines):
 *   BUG_F68617A  the counting of a taken timer as it was before commit
 *                f68617a: popLocked uncounts a timer it takes, dispatch
 *                counts it again only when it queues it on a busy group,
 *                takeRunnable does not count it. Expected to fail.
 *   NW           the number of workers (default 2).
 *   FOREVER      S0 receives messages for ever (a busy subscription).
 *   TFOREVER     the timers with FIRES > 0 fire for ever, each at most
 *                once per subscription callback started (env.pml).
 *                With either, nothing stops the executor and the drain
 *                is not checked (the LTL checks).
 *   LTL_STARVE   selects the ltl block starvation_free.
 *   NOBOUND      the starvation bound is not asserted.
 *   BUG_HOLD_AHEAD  holdLocked puts a subscription finished ready again at
 *                the head of the subscriptions' lane. Expected to fail.
 *   BUG_BATCHENDS_LOADS  popLocked and batchEnds as before d5a4464:
 *                popLocked takes the timers, then counts them; batchEnds
 *                reads timersWaiting, then TimersPending. Expected to fail.
 *   BUG_NO_PRECOUNT  batchEnds' loads in d5a4464's order, popLocked
 *                without the pre-count. Expected to fail.
 *   SPLIT_TAKEWITH  dequeueLocked's TakeWith a step of its own, before
 *                the popLocked after it: the window d5a4464 leaves.
 *                Fails (README.md).
 *   GUARD_TAKEWITH  with SPLIT_TAKEWITH: the Go fix of that window,
 *                dequeueLocked's count around TakeWith (worker.pml).
 *   FIX_TAKEWITH  with SPLIT_TAKEWITH: another candidate fix of it,
 *                TakeWith leaves the timers to popLocked (not in Go).
 */

#ifndef NW
#define NW 2
#endif
#if defined(FOREVER) || defined(TFOREVER)
#define ENDLESS
#endif
#define NT 2            /* timers: entities 0 and 1 */
#define NS 3            /* subscriptions: entities 2, 3 and 4 */
#define NE 5
#define NG 2            /* mutually exclusive groups */
#define NR 2            /* resources */
#define DEPTH 2         /* QoS depth of every subscription, and its threshold */
#ifndef BATCH
#define BATCH 2         /* Options.Batch */
#endif
/* The workload: firings of each timer, messages delivered to each
 * subscription from outside (S2 also gets T1's publications). */
#ifndef T0FIRES
#define T0FIRES 1
#endif
#ifndef T1FIRES
#define T1FIRES 1
#endif
#ifndef S0MSGS
#define S0MSGS 2
#endif
#ifndef S1MSGS
#define S1MSGS 1
#endif
#ifndef PUBN
#define PUBN 1          /* messages T1's callback publishes to S2 */
#endif
#ifndef S2MSGS
#define S2MSGS 1
#endif

#define NONE 255
#define IDLECAP (2 * NW + 2)

/* waitset.State */
#define WAITING 0
#define QUEUED 1
#define RUNNING 2

/* the executor's lifecycle (lifecycle.go), from stateRunning on */
#define S_RUNNING 2
#define S_CLOSING 3
#define S_DRAINING 4
#define S_DRAINED 5

#define T0 0
#define T1 1
#define S0 2
#define S1 3
#define S2 4
#define isTimer(e) ((e) < NT)
#define SUB(e) ((e) - NT)
#define RES(e, i) ((i) == 0 -> res0[e] : res1[e])

/* The trace checker's event kinds (waitset.Op), printed in trails. */
mtype = { Ready, Enqueue, Dequeue, Start, Finish, Accept, Drop, Request, Acquire, Release, Mute, Unmute, Next };
#define EV(op, e) printf("MSC: %e %d\n", op, e)
#define EVS(op, e, n) printf("MSC: %e %d seq %d\n", op, e, n)

/* The wait set (waitset.Set): membership and state of each entity (its
 * state word), and the two pending stacks, which Take drains oldest first. */
byte st[NE];
bool inset[NE];
bool muted[NE];
chan pendT = [NT] of { byte };
chan pendS = [NS] of { byte };

/* The run queue (executor.runQueue). Each section the executor runs under
 * its lock e.mu is one atomic step here, except Executor.next's, which is
 * split where popLocked's steps are (worker.pml); mu is e.mu, taken there
 * and awaited by the other sections. */
bool mu;
chan laneT = [NT] of { byte };
chan laneS = [NS] of { byte };
chan held = [NS] of { byte };
byte laneTimers;
short timersWaiting;
byte idle[IDLECAP];     /* the idle stack, most recently parked last (a slice in Go) */
byte nidle;
byte live = NW;
byte state = S_RUNNING;

/* Workers (workerState). */
byte requeue[NW];
chan runnable[NW] = [NT + NS] of { byte };
chan wakech[NW] = [1] of { bit };

/* Mutually exclusive groups (Group): scheduled and the group's queue. */
byte grp[NE];
byte gsched[NG];
chan gq[NG] = [NE] of { byte };

/* Resources (Resource) and acquisitions (acquisition). */
byte res0[NE];
byte res1[NE];
byte nres[NE];
chan rq[NR] = [NE] of { byte };
byte anext[NE];
bool adone[NE];

/* Subscriptions (subscribers.Subscription): the queue as the sequence
 * numbers accepted and taken; mutees as a bit set of entities. */
byte seq[NS];
byte taken[NS];
bool closed[NS];
byte mutees[NS];
byte mutor[NE];         /* the overloaded subscription of the entity's run (bus.Run) */
bool tstopped;          /* timerq.Queue.Stop */
bool tick[NT] = 1;      /* TFOREVER: the timer may fire again (env.pml) */
byte sourcesDone;       /* sources that have stopped */

/* Ghosts, read only by assertions. */
bool due[NT];           /* ready and not yet committed to start */
byte grun[NG];          /* the entity running in each group */
byte holder[NR];        /* the running entity holding each resource */
byte lastrun[NS];       /* the last message each subscription ran */
bool rdy[NE];           /* Ready, not yet dequeued */
byte passed[NE];        /* others of its lane dequeued since its Ready */
byte seenBy[NT];        /* workers whose batch check saw the timer due at its first load */

#include "wait.pml"
#include "resource.pml"
#include "worker.pml"
#include "env.pml"

init {
	byte i;
	atomic {
		i = 0;
		do
		:: i < NE -> grp[i] = NONE; res0[i] = NONE; res1[i] = NONE; mutor[i] = NONE; i++
		:: else -> break
		od;
		i = 0;
		do
		:: i < NW -> requeue[i] = NONE; i++
		:: else -> break
		od;
		i = 0;
		do
		:: i < IDLECAP -> idle[i] = NONE; i++
		:: else -> break
		od;
		grun[0] = NONE; grun[1] = NONE; holder[0] = NONE; holder[1] = NONE;
		/* T0 and S0 share group 0: a timer that waits for the group its
		 * batching subscription holds (the f68617a scenario). */
		grp[T0] = 0; grp[S0] = 0;
		/* T1 needs both resources and publishes to S2; S1 needs resource
		 * 0 and shares group 1 with S2, which batches. */
		res0[T1] = 0; res1[T1] = 1; nres[T1] = 2;
		res0[S1] = 0; nres[S1] = 1;
		grp[S1] = 1; grp[S2] = 1;
		i = 0;
		do
		:: i < NW -> run worker(i); i++
		:: else -> break
		od;
		run timerSource();
		run messageSource();
#ifndef ENDLESS
		run stopper()
#endif
	}
#ifndef ENDLESS
	(_nr_pr == 1);
	drained()
#endif
}

/* starvation_free (seed 000) on the executor: an entity that becomes ready
 * (its Ready: a due timer, a subscription with an accepted message, one
 * unmuted or finished ready again) eventually runs. Searched for
 * acceptance cycles under weak fairness (pan -a -f). */
#define RUNS(e) [](rdy[e] -> <>(st[e] == RUNNING))
#ifdef LTL_STARVE
ltl starvation_free { RUNS(T0) && RUNS(T1) && RUNS(S0) && RUNS(S1) && RUNS(S2) }
#endif
