/*
 * seed000.pml: seed 000's PlusCal scheduler (--algorithm scheduler), as it
 * stands, for spin. A second, smaller model beside executor.pml, so that
 * the seed's scheduler and ours can be read side by side (README.md).
 *
 * Translation: each PlusCal label is one atomic step (start_sched,
 * end_sched, start_subscriber, end_subscriber, start_timer, end_timer,
 * start_worker, finish_task, end_worker); sets of tasks are bit masks;
 * run_queue is a channel (a task is in it at most once: the scheduler
 * queues only tasks it takes out of `waiting`). SetToSeq's order, which
 * the seed leaves to TLC, is ascending task number here. The ghost `ndone`
 * counts processes at "Done" (the translation's pc[self] = "Done").
 *
 * Kept as the seed has it:
 *   - AllTask == Subscribers \cup Subscribers: the timers are in no state
 *     set (not in `waiting`), so the scheduler never queues them, and
 *     starvation_free quantifies over the subscribers only;
 *   - the scheduler never takes a task out of wait_set;
 *   - finish_subscriber (finish_timer) is set by the first subscriber
 *     (timer) process that ends, not the last.
 *
 * Variants (cpp defines):
 *   REPAIR      ours, not the seed's: the scheduler takes the tasks it
 *               queues out of wait_set (as the executor's take does),
 *               AllTask is Subscribers \cup Timers, and finish_subscriber
 *               (finish_timer) is set by the last subscriber (timer)
 *               process that ends.
 *   LTL_STARVE  the never claim of starvation_free (weak fairness, -a -f).
 *   LTL_TERM    the never claim of Termination (weak fairness, -a -f).
 *   Without either, a safety search: TLC's deadlock check (invalid end
 *   states) and the assertion that every task is in exactly one of its
 *   states (waiting, run_queue, running).
 *
 * Constants: Subscribers, Timers, Workers, LoopSubscriber, LoopTimer.
 */

#ifndef NSUB
#define NSUB 2          /* Subscribers: tasks 0 .. NSUB-1 */
#endif
#ifndef NTIM
#define NTIM 2          /* Timers: tasks NSUB .. NSUB+NTIM-1 */
#endif
#ifndef NWORK
#define NWORK 2         /* Workers */
#endif
#ifndef LOOPSUB
#define LOOPSUB 2       /* LoopSubscriber */
#endif
#ifndef LOOPTIM
#define LOOPTIM 2       /* LoopTimer */
#endif
#define NTASK (NSUB + NTIM)
#define NPROC (1 + NSUB + NTIM + NWORK)   /* ProcSet */

#define BIT(t) (1 << (t))
#define SUBS ((1 << NSUB) - 1)
#define TIMS (((1 << NTIM) - 1) << NSUB)
#ifdef REPAIR
#define ALLTASK (SUBS | TIMS)
#else
#define ALLTASK (SUBS | SUBS)   /* the seed's AllTask, as written */
#endif

int wait_set = 0;
chan run_queue = [NTASK] of { byte };
int running = 0;
int waiting = ALLTASK;
bool finish_subscriber = false;
bool finish_timer = false;
bool is_finish_sched = false;
byte ndone = 0;         /* ghost: processes at "Done" */
#ifdef REPAIR
byte nsubdone = 0;      /* trigger processes ended, for the repaired finish */
byte ntimdone = 0;
#endif

#define is_finish_event (finish_subscriber && finish_timer)

/* The queued set, for the assertion: the tasks in run_queue. */
int queued = 0;         /* ghost, kept with run_queue */

/* Each task in AllTask is in exactly one of waiting, run_queue, running. */
#define partition \
	(((waiting & queued) | (waiting & running) | (queued & running)) == 0 && \
	 (waiting | queued | running) == ALLTASK)

/* process scheduler = "scheduler" */
active proctype scheduler()
{
	int tasks;
	byte t;
	/* start_sched */
	do
	:: atomic {
		(wait_set != 0 || is_finish_event) ->
		if
		:: wait_set != 0 ->
			tasks = waiting & wait_set;
			/* run_queue \o SetToSeq(timers) \o SetToSeq(subscribers) */
			t = NSUB;
			do
			:: t < NTASK -> if :: tasks & BIT(t) -> run_queue!t :: else fi; t++
			:: else -> break
			od;
			t = 0;
			do
			:: t < NSUB -> if :: tasks & BIT(t) -> run_queue!t :: else fi; t++
			:: else -> break
			od;
			t = 0;
			queued = queued | (tasks & (TIMS | SUBS));
			waiting = waiting & ~(tasks & (TIMS | SUBS));
#ifdef REPAIR
			wait_set = wait_set & ~tasks;
#endif
			tasks = 0;
			assert(partition)
		:: else -> break    /* goto end_sched */
		fi
	   }
	od;
	/* end_sched */
	atomic { is_finish_sched = true; ndone++ }
}

/* process trigger_subscriber \in Subscribers */
active [NSUB] proctype trigger_subscriber()
{
	byte cnt = 0;
	/* start_subscriber */
	do
	:: atomic { cnt < LOOPSUB -> wait_set = wait_set | BIT(_pid - 1); cnt++ }
	:: else -> break
	od;
	/* end_subscriber */
#ifdef REPAIR
	atomic { nsubdone++; finish_subscriber = (nsubdone == NSUB); ndone++ }
#else
	atomic { finish_subscriber = true; ndone++ }
#endif
}

/* process trigger_timer \in Timers */
active [NTIM] proctype trigger_timer()
{
	byte cnt = 0;
	/* start_timer */
	do
	:: atomic { cnt < LOOPTIM -> wait_set = wait_set | BIT(_pid - 1); cnt++ }
	:: else -> break
	od;
	/* end_timer */
#ifdef REPAIR
	atomic { ntimdone++; finish_timer = (ntimdone == NTIM); ndone++ }
#else
	atomic { finish_timer = true; ndone++ }
#endif
}

/* process worker \in Workers (work-stealing) */
active [NWORK] proctype worker()
{
	byte task;
	/* start_worker */
	do
	:: atomic {
		(len(run_queue) > 0 || is_finish_sched) ->
		if
		:: len(run_queue) == 0 -> break    /* goto end_worker */
		:: else ->
			run_queue?task;
			queued = queued & ~BIT(task);
			running = running | BIT(task);
			assert(partition)
		fi
	   };
		/* finish_task */
		atomic {
			running = running & ~BIT(task);
			waiting = waiting | BIT(task);
			assert(partition)
		}
	od;
	/* end_worker */
	atomic { skip; ndone++ }
}

/* starvation_free: \A e \in AllTask : e \in wait_set ~> <>(e \in running),
 * one conjunct per task of AllTask (at most 2 subscribers and 2 timers). */
#define STARVE(t) []((wait_set & BIT(t)) -> <>(running & BIT(t)))
#if defined(LTL_STARVE) && defined(REPAIR)
#if NTIM > 1
ltl starvation_free { STARVE(0) && STARVE(1) && STARVE(2) && STARVE(3) }
#else
ltl starvation_free { STARVE(0) && STARVE(1) && STARVE(2) }
#endif
#elif defined(LTL_STARVE)
ltl starvation_free { STARVE(0) && STARVE(1) }
#elif defined(LTL_TERM)
/* Termination == <>(\A self \in ProcSet : pc[self] = "Done") */
ltl termination { <>(ndone == NPROC) }
#endif
