package cli

// Tests of bench on its smallest group, memory, which takes a fraction of
// a second, and of its command line. Speed is never asserted.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// smallBench are the flags of the shortest bench run.
var smallBench = []string{"bench", "-only", "memory", "-budget", "1s", "-repeat", "1", "-workers", "1"}

// TestBenchTable: the table, each metric beside its baseline, on stdout;
// the progress on stderr.
func TestBenchTable(t *testing.T) {
	t.Parallel()
	r := startCLI(smallBench...).wait(t, traffic)
	require.Equal(t, ExitOK, r.code, "%s", r)
	require.Regexp(t, `^metric +robotexec +baseline +ratio +target\n`, r.stdout)
	require.Regexp(t, `(?m)^allocs per event \(in-process\) +.* value ≤1 (ok|MISSED)$`, r.stdout)
	require.Contains(t, r.stdout, "; 1 workers; median of 1 repetitions")
	require.NotContains(t, r.stdout, "dispatch throughput", "-only runs only the groups named")
	require.Contains(t, r.stderr, "bench: memory: 1 repetitions")
	require.Contains(t, r.stderr, "bench: memory: done in ")
}

// TestBenchJSON: -json prints the metrics as JSON, -q no progress, and
// -cpuprofile writes a profile of the run.
func TestBenchJSON(t *testing.T) {
	t.Parallel()
	profile := filepath.Join(t.TempDir(), "cpu.pprof")
	r := startCLI(slices.Concat(smallBench, []string{"-json", "-q", "-cpuprofile", profile})...).wait(t, traffic)
	require.Equal(t, ExitOK, r.code, "%s", r)
	require.Empty(t, r.stderr, "-q prints no progress")
	var doc struct {
		Metrics []struct {
			Name     string
			Value    *float64
			Baseline *float64
			Unit     string
			Error    string
		}
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc), "%s", r)
	require.NotEmpty(t, doc.Metrics)
	for _, m := range doc.Metrics {
		require.NotNil(t, m.Value, m.Name)
		require.NotNil(t, m.Baseline, m.Name)
		require.NotEmpty(t, m.Unit, m.Name)
		require.Empty(t, m.Error, m.Name)
	}
	require.True(t, strings.HasPrefix(doc.Metrics[0].Name, "allocs per event"), doc.Metrics[0].Name)
	st, err := os.Stat(profile)
	require.NoError(t, err)
	require.Positive(t, st.Size(), "the CPU profile")
}

func TestBenchErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"-repeat 0", []string{"-repeat", "0"}, ExitUsage, "robotexec bench: -repeat 0: want 1 or more\nUsage: robotexec bench"},
		{"-workers 0", []string{"-workers", "0"}, ExitUsage, "robotexec bench: -workers 0: want 1 or more\nUsage: robotexec bench"},
		{"-budget 0s", []string{"-budget", "0s"}, ExitUsage, "robotexec bench: -budget 0s: want a positive duration\nUsage: robotexec bench"},
		{"-only nope", []string{"-only", "memory, nope", "-q"}, ExitUsage, "robotexec bench: "},
		{"-cpuprofile in no directory", []string{"-only", "memory", "-cpuprofile", filepath.Join(t.TempDir(), "none", "cpu.pprof")}, ExitFailure,
			"robotexec bench: open "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := cli(t, append([]string{"bench"}, tc.args...)...)
			require.Equal(t, tc.code, r.code, "%s", r)
			require.Empty(t, r.stdout)
			require.Contains(t, r.stderr, tc.want)
			if tc.code == ExitUsage {
				require.Contains(t, r.stderr, "Usage: robotexec bench [flags]")
			}
		})
	}
}
