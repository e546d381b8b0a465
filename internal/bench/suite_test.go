package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/bench"
	"github.com/robotexec/robotexec/internal/mqtttest"
)

// small is a suite that runs every workload briefly, at reduced sizes:
// it checks that the workloads work, not how fast.
func small() bench.Config {
	return bench.Config{
		Budget: time.Second, Repeat: 2, Workers: 2,
		IdleEntities: 1000, Timers: 50, TimerPeriod: 5 * time.Millisecond,
		MemoryCount: 200, AllocEvents: 2000,
	}
}

func TestRunEveryMetric(t *testing.T) {
	var progress bytes.Buffer
	cfg := small()
	cfg.Progress = &progress
	rep, err := bench.Run(context.Background(), cfg)
	require.NoError(t, err)

	_, haveMosquitto := mqtttest.MosquittoPath()
	_, haveEjabberd := mqtttest.EjabberdPath()
	var names, notMeasured, noCluster []string
	for _, m := range rep.Metrics {
		names = append(names, m.Name)
		require.Empty(t, m.Error, "%s", m.Name)
		cluster := strings.HasPrefix(m.Name, "mqtt bridge via a 2-node cluster") || strings.HasPrefix(m.Name, "mqtt failover")
		if m.NotMeasured != "" && cluster {
			// The cluster's rows, on a machine without ejabberd.
			require.False(t, haveEjabberd, "%s: not measured with ejabberd at hand", m.Name)
			require.Equal(t, "install ejabberd", m.NotMeasured)
			noCluster = append(noCluster, m.Name)
			continue
		}
		if m.NotMeasured == bench.ErrNoExecutable.Error() {
			// The rows of robotexec processes: without Config.Executable
			// here, measured by robotexec bench (bench_cli_test.go).
			require.True(t, strings.Contains(m.Name, "under run") || strings.HasPrefix(m.Name, "idle"), "%s", m.Name)
			continue
		}
		if m.NotMeasured != "" {
			// Only the rows through mosquitto, on a machine without it.
			require.False(t, haveMosquitto, "%s: not measured with mosquitto at hand", m.Name)
			require.Contains(t, m.Name, "mosquitto")
			require.Equal(t, "install mosquitto", m.NotMeasured)
			notMeasured = append(notMeasured, m.Name)
			continue
		}
		require.Equal(t, 2, m.Repeats, "%s", m.Name)
		require.Len(t, m.Samples.Value, 2, "%s", m.Name)
		if m.BaselineName != "" {
			require.Len(t, m.Samples.Baseline, 2, "%s", m.Name)
		} else {
			require.Empty(t, m.Samples.Baseline, "%s: a count or a spread, without a baseline", m.Name)
		}
		require.NotEmpty(t, m.Unit, "%s", m.Name)
		if m.Target != nil && m.Ratio != nil || m.Target != nil && m.Target.Of == "value" {
			require.NotNil(t, m.OK, "%s: a target is judged", m.Name)
		}
	}
	require.Equal(t, bench.MetricNames(), names)
	for _, prefix := range []string{"dispatch throughput", "dispatch latency p99", "per-event cost 100k vs 10", "timer lateness p99", "mqtt bridge"} {
		found := false
		for _, n := range names {
			found = found || strings.HasPrefix(n, prefix)
		}
		require.True(t, found, "issue 6 names a metric %q", prefix)
	}
	byName := map[string]bench.Metric{}
	for _, m := range rep.Metrics {
		byName[m.Name] = m
	}
	for _, name := range []string{"dispatch throughput (cb/s)", "mqtt bridge msgs/s", "per-event cost 100k vs 10 ents (ns)", "bytes per idle subscription", "bytes per timer"} {
		m := byName[name]
		require.Positive(t, m.Value, "%s", name)
		require.Positive(t, m.Baseline, "%s", name)
		require.NotNil(t, m.Ratio, "%s", name)
	}
	requireFasterRaw(t, byName["mqtt bridge msgs/s"])
	requireReference(t, byName["reference hot path mean (ms)"], "hot path mean without priorities", "hot path p99 without priorities", "planner period std without priorities",
		"hot path mean unpinned", "hot path p99 unpinned")
	requireReference(t, byName["reference hot path mean, 1 worker (ms)"])
	for _, name := range []string{"reference saturated hot path mean (ms)", "reference saturated hot path mean, no priorities (ms)"} {
		sat := byName[name]
		requireReference(t, sat, "cpu demand")
		require.Greater(t, sat.Figures[9].Value, 0.0, "%s: the demand", name)
		require.Regexp(t, `needs [0-9.]+ cores of crunch, [0-9.]+ times what 2 workers give \([0-9.]+/s of Crunch\(4096\), [0-9.]+ ms of CPU each \+ [0-9.]+/s of Crunch\(12288\)`, sat.Note)
	}
	late := byName["timer lateness p99 under run (us)"]
	require.Len(t, late.Figures, 2)
	require.Len(t, late.Figures[0].Samples, cfg.Repeat, "the machine's stalls beside each repetition")
	require.GreaterOrEqual(t, slices.Min(late.Figures[1].Samples), 0.0)
	require.Regexp(t, `the machine held such a thread for more than 200µs [0-9.,kM ]+ times a second, at most [0-9.,kM ]+ us`, late.Note)
	missed := byName["timer deadlines missed under run"]
	require.Len(t, missed.Figures, 1)
	require.Equal(t, "time.AfterFunc calls a period or more late", missed.Figures[0].Name)
	require.Len(t, missed.Figures[0].Samples, cfg.Repeat, "one count per repetition of the baseline")
	require.Regexp(t, `it served [0-9.,kM]+ a period or more late in its worst repetition`, missed.Note)
	planner := byName["reference planner period std (ms)"]
	require.Len(t, planner.Figures, 9)
	require.Equal(t, "planner period std without the crunch", planner.Figures[1].Name)
	require.NotEmpty(t, planner.Figures[1].Samples, "the floor: the planner's periods in the run without the crunch")
	require.Contains(t, planner.Note, "The floor on this machine")
	for i, name := range []string{"min", "median", "max"} {
		f := planner.Figures[2+i]
		require.Equal(t, "planner start after its deadline, "+name, f.Name)
		require.Len(t, f.Samples, cfg.Repeat, "one a window")
		require.GreaterOrEqual(t, f.Value, 0.0, "%s", f.Name)
	}
	require.LessOrEqual(t, planner.Figures[2].Value, planner.Figures[4].Value, "min, max")
	require.Regexp(t, `how late the planner started, min, median and max, in ms: [0-9.]+ \([0-9.]+, [0-9.]+, [0-9.]+\)`, planner.Note)
	require.Regexp(t, `or more late, the workers ran: (nothing|[A-Za-z]+ [0-9]+)`, planner.Note)
	slowed := planner.Figures[5]
	require.Equal(t, "crunches the machine slowed", slowed.Name)
	require.Len(t, slowed.Samples, cfg.Repeat, "one a window")
	require.True(t, slowed.Value >= 0 && slowed.Value <= 100, "a share: %v", slowed.Value)
	require.Equal(t, "planner period std without the cycles slowed crunches held", planner.Figures[6].Name)
	require.Regexp(t, `The planner's starts 300µs or more later than their window's median: [0-9]+, of which [0-9]+ came while such a crunch ran`, planner.Note)
	for i, name := range []string{"without", "with"} {
		f := planner.Figures[7+i]
		require.Equal(t, "planner period std, its deadline moved, "+name+" the reserve", f.Name)
		require.Len(t, f.Samples, cfg.Repeat, "one a window")
	}
	require.Regexp(t, `so that its deadline falls [0-9.]+ and [0-9.]+ ms after the lidars' runs`, planner.Note)
	p99 := byName["reference hot path p99 (ms)"]
	require.Len(t, p99.Figures, 1)
	require.Equal(t, slowed.Samples, p99.Figures[0].Samples, "the same run's crunches")
	refCPU := byName["reference cpu (% of a core)"]
	require.Positive(t, refCPU.Value)
	require.Positive(t, refCPU.Baseline, "the crunching callbacks were counted")
	require.Len(t, refCPU.Figures, 2)
	require.Positive(t, refCPU.Figures[1].Value, "the CPU per callback run without the crunch")
	require.Less(t, refCPU.Figures[0].Value, refCPU.Value, "the graph takes less CPU without its crunch")
	if haveMosquitto {
		mosq := byName["reference hot path via mosquitto (ms)"]
		requireReference(t, mosq, "hot path mean without linger", "ratio without linger")
		require.Contains(t, mosq.Note, "with mqtt.linger 10ms")
		require.Positive(t, mosq.Figures[10].Value, "the ratio without linger")
		requireFasterRaw(t, byName["mqtt bridge via mosquitto (msgs/s)"])
		pipe := byName["pipeline 5 hops via mosquitto (us cpu/msg)"]
		require.Positive(t, pipe.Value)
		require.Positive(t, pipe.Baseline)
		require.Len(t, pipe.Figures, 2)
		require.Equal(t, "broker sent per msg, in_process false", pipe.Figures[1].Name)
		require.Equal(t, float64(bench.PipelineStages+1), pipe.Figures[1].Value, "every hop through the broker")
		require.Contains(t, pipe.Note, "each received exactly once by the sink and by the outside subscriber (checked)")
	}
	require.Contains(t, byName["dispatch latency p99 (us)"].Note, "half what the slower sustains with this producer unpaced")
	// The timers' cpu, read from the process (Linux in CI).
	require.Regexp(t, `cpu [0-9.]+% vs [0-9.]+% of one core`, byName["timer lateness p99 (us)"].Note)
	require.Regexp(t, `; cpu [0-9.]+%;`, byName["timer lateness p99, go timers (us)"].Note)
	require.Equal(t, 2, rep.Workers)
	require.Equal(t, "1s", rep.Budget)
	require.Contains(t, progress.String(), "bench: bridge: 2 repetitions")

	var b bytes.Buffer
	require.NoError(t, rep.WriteJSON(&b))
	require.True(t, json.Valid(b.Bytes()))
	if haveEjabberd {
		requireFasterRaw(t, byName["mqtt bridge via a 2-node cluster (msgs/s)"])
		f := byName["mqtt failover to the other node (ms)"]
		require.Positive(t, f.Value)
		require.Positive(t, f.Baseline)
		require.Len(t, f.Samples.Value, 2, "one kill a repetition")
	}
	if len(noCluster) > 0 {
		mqtttest.MissingEjabberd(t) // the cluster's rows were not measured
	}
	if len(notMeasured) > 0 {
		mqtttest.MissingMosquitto(t) // the rows above were not measured
	}
}

// requireReference checks the headline row of a mode of the reference
// system: the hot path's latency against the lower bound, both measured,
// with the mode's figures, and extra ones after them.
func requireReference(t *testing.T, m bench.Metric, extra ...string) {
	t.Helper()
	require.Positive(t, m.Value, "%s", m.Name)
	require.Positive(t, m.Baseline, "%s: the lower bound", m.Name)
	require.NotNil(t, m.Ratio, "%s", m.Name)
	var names []string
	for _, f := range m.Figures {
		names = append(names, f.Name)
		require.Contains(t, m.Note, f.Name+" "+bench.FormatNumber(f.Value)+" "+f.Unit, "%s", m.Name)
	}
	require.Equal(t, append([]string{"hot path min", "hot path p99", "hot path max", "hot path drops", "planner period mean",
		"planner period std", "end-to-end latency mean", "cpu", "rss"}, extra...), names, "%s", m.Name)
	require.Positive(t, m.Figures[4].Value, "%s: BehaviorPlanner's period", m.Name)
	require.LessOrEqual(t, m.Figures[0].Value, m.Value, "%s: min <= mean", m.Name)
}

// requireFasterRaw checks a bridge row: both raw forwarders measured in
// every repetition, the faster one its baseline, both named in the note.
func requireFasterRaw(t *testing.T, m bench.Metric) {
	t.Helper()
	require.Len(t, m.Figures, 2, "%s", m.Name)
	names := []string{"raw paho.mqtt.golang 3.1.1", "raw paho.golang 5.0"}
	faster := m.Figures[0]
	for i, f := range m.Figures {
		require.Equal(t, names[i], f.Name, "%s", m.Name)
		require.Equal(t, "msgs/s", f.Unit)
		require.Len(t, f.Samples, m.Repeats, "%s: %s measured in every repetition", m.Name, f.Name)
		require.Positive(t, f.Value)
		require.Contains(t, m.Note, f.Name+" "+bench.FormatNumber(f.Value))
		if f.Value > faster.Value {
			faster = f
		}
	}
	require.Equal(t, faster.Name, m.BaselineName, "%s: the faster raw forwarder is the baseline", m.Name)
	require.Equal(t, faster.Samples, m.Samples.Baseline, "%s", m.Name)
	require.Regexp(t, `the broker's Receive Maximum, [0-9]+, in flight`, m.Note)
}

func TestRunOnly(t *testing.T) {
	cfg := small()
	cfg.Only = []string{"latency"}
	cfg.Repeat = 1
	cfg.Budget = 300 * time.Millisecond
	rep, err := bench.Run(context.Background(), cfg)
	require.NoError(t, err)
	require.Len(t, rep.Metrics, 3)
	for _, m := range rep.Metrics {
		require.True(t, strings.HasPrefix(m.Name, "dispatch latency p"), m.Name)
		require.Empty(t, m.Error)
	}
	require.Contains(t, rep.Metrics[1].Note, "half what the slower sustains with this producer unpaced", "latency measures its load itself")
}

func TestRunStopsWhenContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rep, err := bench.Run(ctx, small())
	require.ErrorIs(t, err, context.Canceled)
	require.NotNil(t, rep)
	require.Empty(t, rep.Metrics)
}

func TestConfigErrors(t *testing.T) {
	for _, cfg := range []bench.Config{
		{Only: []string{"nope"}},
		{Budget: -time.Second},
		{Repeat: -1},
		{Workers: -2},
		{TimerPeriod: -time.Millisecond},
	} {
		rep, err := bench.Run(context.Background(), cfg)
		require.Error(t, err, "%+v", cfg)
		require.Nil(t, rep)
		require.True(t, strings.HasPrefix(err.Error(), "bench: "), err.Error())
	}
}

// TestRunView runs the view forwarding group alone on a tiny budget: both
// rows measured, every viewer's frame counted, the notes' figures read.
func TestRunView(t *testing.T) {
	cfg := small()
	cfg.Only = []string{"view"}
	cfg.Repeat = 1
	cfg.Budget = 300 * time.Millisecond
	rep, err := bench.Run(context.Background(), cfg)
	require.NoError(t, err)
	require.Len(t, rep.Metrics, 2)
	cpu, p99 := rep.Metrics[0], rep.Metrics[1]
	require.Equal(t, "view forwarding (us cpu/msg)", cpu.Name)
	require.Equal(t, "view forwarding p99 (us)", p99.Name)
	for _, m := range rep.Metrics {
		require.Empty(t, m.Error, "%s", m.Name)
		require.Equal(t, "echo", m.BaselineName)
		require.Len(t, m.Samples.Value, 1)
		require.Len(t, m.Samples.Baseline, 1)
		require.NotNil(t, m.OK, "%s: its target is judged", m.Name)
	}
	// The CPU figures are differences of two windows of a busy process:
	// on a tiny budget, under the race detector, they are noise.
	require.Positive(t, p99.Value)
	require.Positive(t, p99.Baseline)
	require.Len(t, cpu.Figures, 1)
	// Both viewers read: more than one frame per message received. The
	// count is of the frames of the messages received in the measured
	// window, however late read: two, less the frames that the view
	// dropped for a viewer that fell behind, or more when the node
	// dropped messages; far from what counting a frame many times, or
	// none of a viewer's, would give.
	require.Greater(t, cpu.Figures[0].Value, 1.0)
	require.Less(t, cpu.Figures[0].Value, float64(3*bench.ViewViewers))
	require.Regexp(t, `Received [0-9.k]+ vs [0-9.k]+ msgs/s`, cpu.Note)
}
