package model_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/robotexec/robotexec/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Run(m)) }

// check is one exhaustive run of spin on a model: a configuration (cpp
// defines) and whether spin must find a violation.
type check struct {
	name string
	// model is the Promela file checked; executor.pml if empty.
	model   string
	defines []string
	// ltl says the model's never claim (an ltl block the defines select)
	// is a liveness property: pan is compiled without -DSAFETY and run
	// with -a -f, an acceptance-cycle search under weak fairness.
	ltl bool
	// fails says the check must find a violation and print its trail: the
	// model of a protocol known to be wrong.
	fails bool
	// violation, if set, is what pan's report of the violation must say.
	violation string
	why       string
}

// checks are run in order by TestModel; README.md lists them with what
// each shows, and the states and times measured.
var checks = []check{
	{name: "timers-groups-batch", defines: []string{"-DT1FIRES=0", "-DS1MSGS=0", "-DS2MSGS=0", "-DIDLE_UNIQUE"},
		why: "T0 fires once, S0 (T0's group) gets two messages and batches them: self-exclusion, group exclusion, timers first, FIFO, the batch stop on a due timer, parking (no worker on the idle stack twice), the drain"},
	{name: "resources", defines: []string{"-DT0FIRES=0", "-DS0MSGS=0", "-DS2MSGS=0", "-DPUBN=0", "-DIDLE_UNIQUE"},
		why: "T1 needs both resources, S1 (group 1) the first: ordered acquisition, UniqueAcquisition, RunningImplication, release to the runnable list, the drain"},
	{name: "mute-handoff", defines: []string{"-DT0FIRES=0", "-DS0MSGS=0", "-DS1MSGS=0", "-DS2MSGS=0", "-DPUBN=2", "-DIDLE_UNIQUE"},
		why: "T1 publishes two messages to S2 (a quiet trigger, the hand-off) and fills its queue: T1 is muted until S2 drains, the drain"},
	{name: "bug-idle-twice", defines: []string{"-DLATE_STOP", "-DT1FIRES=0", "-DS1MSGS=0", "-DS2MSGS=0", "-DIDLE_UNIQUE", "-DBUG_IDLE_TWICE"}, fails: true,
		why: "parkLocked before takeBack, a finding of the model: a stale wake-up token lets a worker park while it is on the idle stack already"},
	{name: "bug-f68617a", defines: []string{"-DLATE_STOP", "-DT1FIRES=0", "-DS1MSGS=0", "-DS2MSGS=0", "-DBUG_F68617A"}, fails: true,
		why: "the counting of a taken timer before f68617a: a batch goes on past a due timer"},
	// Starvation (LTL): endless workloads, so that a starved entity is a
	// cycle; the starvation bound is asserted at every dequeue.
	{name: "starvation-1w", defines: []string{"-DLTL_STARVE", "-DNW=1", "-DFOREVER", "-DTFOREVER", "-DT1FIRES=0", "-DS1MSGS=0", "-DPUBN=0"}, ltl: true,
		why: "one worker; S0 gets messages for ever and batches, T0 (S0's group) fires for ever, once per callback, S2 gets one message: every ready entity eventually runs, within the starvation bound"},
	{name: "starvation-2w", defines: []string{"-DLTL_STARVE", "-DFOREVER", "-DT0FIRES=0", "-DT1FIRES=0", "-DS1MSGS=0", "-DS2MSGS=0", "-DPUBN=0"}, ltl: true,
		why: "two workers; S0 gets messages for ever: each time S0 is ready again (held, or triggered while parked workers wait) it eventually runs"},
	{name: "bug-hold-ahead", defines: []string{"-DLTL_STARVE", "-DNW=1", "-DFOREVER", "-DTFOREVER", "-DT1FIRES=0", "-DS1MSGS=0", "-DPUBN=0", "-DBUG_HOLD_AHEAD", "-DNOBOUND"}, ltl: true, fails: true, violation: "acceptance cycle",
		why: "a subscription finished ready again goes back to the head of the run queue (the bound not asserted): S2 is ready and never runs, an acceptance cycle of starvation_free"},
	{name: "bug-batchends-loads", defines: []string{"-DLATE_STOP", "-DT1FIRES=0", "-DS1MSGS=0", "-DS2MSGS=0", "-DBUG_BATCHENDS_LOADS"}, fails: true, violation: "assertion violated",
		why: "popLocked and batchEnds before d5a4464 (a finding of the model): popLocked takes the timers, then counts them; batchEnds reads timersWaiting, then TimersPending; a popLocked between the two loads hides a due timer from both, and the batch goes on"},
	{name: "finding-takewith-window", defines: []string{"-DLATE_STOP", "-DT1FIRES=0", "-DS1MSGS=0", "-DS2MSGS=0", "-DSPLIT_TAKEWITH"}, fails: true, violation: "assertion violated",
		why: "the window d5a4464 left (a finding of the model, fixed since: takewith-guard): a timer pushed between popLocked's look at the wait set and TakeWith is taken by TakeWith, uncounted until the popLocked after it; a batch check between them finds it neither pending nor counted, and the batch goes on"},
	{name: "takewith-guard", defines: []string{"-DLATE_STOP", "-DT1FIRES=0", "-DS1MSGS=0", "-DS2MSGS=0", "-DSPLIT_TAKEWITH", "-DGUARD_TAKEWITH"},
		why: "the TakeWith window with the Go fix (dequeueLocked counts timersWaiting from before TakeWith until the popLocked after it has counted the lane): the batch stops at a due timer"},
	// The run queue's priority rule (priority.pml; README.md, Priorities):
	// U1 and U2 urgent, with messages for ever, L of priority 0,
	// MAXSTREAK 2. The bounds and the choice are asserted at every
	// subscription dequeue, in the LTL checks too.
	{name: "priority-bound-2w", model: "priority.pml", defines: []string{"-DNW=2"},
		why: "two workers, L of priority 0 with two messages, U1 and U2 urgent with messages for ever: each dequeue is the subscription queued longest or the urgent one of the highest priority; at most MAXSTREAK dequeues in a row pass over the one queued longest; one with k queued before it is dequeued within (k+1)(MAXSTREAK+1) dequeues of its enqueue, and within the trace checker's bound of its readiness"},
	{name: "priority-batch-1w", model: "priority.pml", defines: []string{"-DNW=1", "-DNL=2"},
		why: "one worker, two subscriptions of priority 0 (a batch of two, held behind one pending) and U1, U2 urgent with messages for ever: the same assertions, with the batch's head standing for its batch"},
	{name: "priority-starvation-1w", model: "priority.pml", defines: []string{"-DLTL_STARVE", "-DNW=1"}, ltl: true,
		why: "one worker; U1 and U2 get messages for ever: a ready subscription (L, U1 or U2) eventually runs"},
	{name: "priority-starvation-2w", model: "priority.pml", defines: []string{"-DLTL_STARVE", "-DNW=2"}, ltl: true,
		why: "two workers; U1 and U2 get messages for ever: a ready subscription (L, U1 or U2) eventually runs"},
	{name: "bug-no-streak", model: "priority.pml", defines: []string{"-DNW=2", "-DBUG_NO_STREAK"}, fails: true, violation: "assertion violated",
		why: "pickLocked without the streak (always the urgent one of the highest priority): U2 ready again after each run passes over U1, queued first, more than MAXSTREAK times: the bound fails"},
	{name: "bug-no-streak-starve", model: "priority.pml", defines: []string{"-DLTL_STARVE", "-DNW=1", "-DNOBOUND", "-DBUG_NO_STREAK"}, ltl: true, fails: true, violation: "acceptance cycle",
		why: "pickLocked without the streak, the bounds not asserted: U2 gets messages for ever and runs for ever; L and U1, queued, never run, an acceptance cycle of starvation_free"},
	// Seed 000's scheduler model (seed000.pml; docs/design.md, Scheduler
	// model), as it stands and repaired; README.md puts it beside
	// executor.pml. The repaired model's safety search is left out:
	// seed000-repaired-termination checks the same assertions, and a
	// deadlock would fail Termination.
	{name: "seed000-safety", model: "seed000.pml",
		why: "seed 000 as it stands: no deadlock (TLC's default check), every task in exactly one of waiting, run_queue, running"},
	{name: "seed000-starvation", model: "seed000.pml", defines: []string{"-DLTL_STARVE"}, ltl: true,
		why: "seed 000 as it stands: starvation_free (over AllTask = Subscribers) under weak fairness"},
	{name: "seed000-termination", model: "seed000.pml", defines: []string{"-DLTL_TERM"}, ltl: true, fails: true,
		why: "seed 000 as it stands: Termination fails, the scheduler never takes a task out of wait_set, so it never reaches end_sched"},
	{name: "seed000-repaired-starvation", model: "seed000.pml", defines: []string{"-DREPAIR", "-DNTIM=1", "-DLOOPTIM=1", "-DLTL_STARVE"}, ltl: true,
		why: "seed 000 repaired: starvation_free over subscribers and timers under weak fairness"},
	{name: "seed000-repaired-termination", model: "seed000.pml", defines: []string{"-DREPAIR", "-DNTIM=1", "-DLOOPTIM=1", "-DLTL_TERM"}, ltl: true,
		why: "seed 000 repaired: Termination under weak fairness"},
}

// TestModel runs every check: spin -a, gcc, ./pan. It fails if a check
// that must pass finds a violation or does not complete, or if a check
// that must fail passes; without spin or gcc it ends as testenv.Missing
// says (skipped, or failed under ROBOTEXEC_TEST_ALL=1).
func TestModel(t *testing.T) {
	testenv.LookPath(t, testenv.Spin)
	testenv.LookPath(t, testenv.GCC)
	sources, err := filepath.Glob("*.pml")
	if err != nil || len(sources) == 0 {
		t.Fatalf("no Promela sources here: %v", err)
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			// Each check works in a directory of its own: they run side
			// by side, one a processor (the -parallel default).
			t.Parallel()
			dir := t.TempDir()
			for _, src := range sources {
				b, err := os.ReadFile(src)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, src), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			runCheck(t, dir, c)
		})
	}
}

// runCheck generates, compiles and runs the verifier for c in dir.
func runCheck(t *testing.T, dir string, c check) {
	t.Logf("%s", c.why)
	model := c.model
	if model == "" {
		model = "executor.pml"
	}
	run(t, dir, "spin", append(append([]string{"-a"}, c.defines...), model)...)
	// Safety search, depth-first, exhaustive: assertions and invalid end
	// states; COLLAPSE compresses states without losing any.
	// -O0: gcc takes 15 s at -O2, more than these searches gain by it.
	// A liveness check drops -DSAFETY and searches for acceptance cycles
	// (-a) under weak fairness (-f); NFAIR=3 for seed000's 7 processes
	// (executor.pml has at most 5).
	mode, flags := "-DSAFETY", []string{"-m400000"}
	if c.ltl {
		mode, flags = "-DNFAIR=3", []string{"-m400000", "-a", "-f"}
	}
	run(t, dir, "gcc", "-O0", "-w", mode, "-DCOLLAPSE", "-DMEMLIM=3072", "-o", "pan", "pan.c")
	start := time.Now()
	cmd := exec.Command("./pan", flags...)
	cmd.Dir = dir
	out, _ := cmd.CombinedOutput() // pan's exit status says nothing more than its report
	elapsed := time.Since(start)
	report := string(out)
	errs := match(t, report, `errors: (\d+)`)
	states := match(t, report, `(\d+) states, stored`)
	t.Logf("%s states stored, %s errors, %.1f s", states, errs, elapsed.Seconds())
	trail := filepath.Join(dir, model+".trail")
	switch {
	case c.fails && errs == "0":
		t.Fatalf("spin found no violation in a model that must fail:\n%s", report)
	case c.fails:
		if !strings.Contains(report, c.violation) {
			t.Fatalf("spin found a violation other than %q:\n%s", c.violation, report)
		}
		if _, err := os.Stat(trail); err != nil {
			t.Fatalf("no trail for the violation: %v\n%s", err, report)
		}
		replay := run(t, dir, "spin", append(append([]string{"-t"}, c.defines...), model)...)
		t.Logf("violation found as expected; its trail:\n%s", steps(report, replay))
	case errs != "0":
		replay := run(t, dir, "spin", append(append([]string{"-t"}, c.defines...), model)...)
		t.Fatalf("spin found a violation:\n%s\ntrail:\n%s", report, steps(report, replay))
	case strings.Contains(report, "Search not completed") || strings.Contains(report, "MEMLIM"):
		t.Fatalf("the search did not complete:\n%s", report)
	}
}

// run runs name with args in dir and returns its output; it fails the test
// if the command fails.
func run(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// match returns the first group of re in s, failing the test if none.
func match(t *testing.T, s, re string) string {
	t.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("no %q in pan's report:\n%s", re, s)
	}
	if _, err := strconv.ParseUint(m[1], 10, 64); err != nil {
		t.Fatalf("%q: %v", m[1], err)
	}
	return m[1]
}

// steps returns the violation pan reported and the trail's steps: the
// event lines (MSC) and spin's own messages.
func steps(report, replay string) string {
	var b strings.Builder
	for _, l := range strings.Split(report, "\n") {
		if strings.HasPrefix(l, "pan:1:") {
			b.WriteString(l + "\n")
		}
	}
	for _, l := range strings.Split(replay, "\n") {
		if strings.Contains(l, "MSC:") || strings.HasPrefix(strings.TrimSpace(l), "spin:") {
			b.WriteString(strings.TrimSpace(l) + "\n")
		}
	}
	return b.String()
}
