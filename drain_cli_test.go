package robotexec_test

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestDrainDeadline: robotexec run of a heartbeat that feeds a stage whose
// callback waits 60 s for each message, watching its context. SIGTERM
// arrives while the stage waits with messages queued behind it. At the
// drain deadline (executor.drain_timeout, 2 s here) the stage's context is
// done: the callback returns, the messages queued behind it run at once
// with done contexts (their publications refused, each logged), and
// robotexec run exits 0 within a second of the deadline. Every message the
// stage accepted ran: as many refusals are logged as its queue held, plus
// the one it was waiting on.
func TestDrainDeadline(t *testing.T) {
	t.Parallel()
	const drain = 2 * time.Second
	r := startPipeline(t, pipelineOptions{broker: "embedded", inProcess: true, executor: ", drain_timeout: 2s", nodes: "" +
		"  - { name: beat, type: heartbeat, params: { topic: work, period: 20ms } }\n" +
		"  - { name: slow, type: stage, params: { input: work, output: done, work: 60s } }\n"})
	depth := `robotexec_queue_depth{callback="stage",node="slow"}`
	deadline := time.Now().Add(traffic)
	for {
		if code, _ := getURL(t, r.metrics); code == 200 && r.metric(t, depth) >= 3 {
			break
		}
		require.True(t, time.Now().Before(deadline), "no messages queued behind the stage's first")
		time.Sleep(20 * time.Millisecond)
	}
	stopped := time.Now()
	r.signal(t, syscall.SIGTERM)
	r.stderr.waitFor(t, traffic, "stopping: draining the queues")
	// The sources are closed: what the stage's queue holds now is all it
	// accepted but the one it is running.
	time.Sleep(100 * time.Millisecond)
	queued := int(r.metric(t, depth))
	code := r.wait(t, drain+5*time.Second)
	took := time.Since(stopped)
	require.Equal(t, 0, code, "stderr:\n%s", strings.Join(r.stderr.all(), "\n"))
	require.GreaterOrEqual(t, took, drain, "the stage returned before the drain deadline")
	require.Less(t, took, drain+time.Second, "exited more than a second after the drain deadline")
	logs := strings.Join(r.stderr.all(), "\n")
	require.Contains(t, logs, "the drain deadline passed")
	refused := strings.Count(logs, `msg="stage: publish failed" node=slow err="context deadline exceeded"`)
	require.Equal(t, queued+1, refused, "every message the stage accepted ran, with a done context")
}
