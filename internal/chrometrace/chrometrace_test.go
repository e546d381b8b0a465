package chrometrace_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/chrometrace"
	"github.com/robotexec/robotexec/internal/tracecheck"
)

func describe(id uint64) chrometrace.Entity {
	if id%2 == 0 {
		return chrometrace.Entity{Node: "filter", Callback: "timer(100ms)", Kind: "timer"}
	}
	return chrometrace.Entity{Node: "bridge", Callback: `sensors/+/raw "q"`, Kind: "subscription"}
}

func write(t *testing.T, r *chrometrace.Recorder) []byte {
	t.Helper()
	var buf bytes.Buffer
	n, err := r.WriteTo(&buf, chrometrace.WriteOptions{PID: 42, Describe: describe})
	require.NoError(t, err)
	require.Equal(t, int64(buf.Len()), n)
	return buf.Bytes()
}

func TestWriteFormat(t *testing.T) {
	r := chrometrace.New(2, 0)
	r.Add(0, chrometrace.Span{Start: 1_000, Dur: 999, Latency: 1, ID: 2})
	r.Add(0, chrometrace.Span{Start: 1_999, Dur: 2_000_000, Latency: -1, ID: 3})
	r.Add(1, chrometrace.Span{Start: 1_500, Dur: 0, Latency: 12_345, ID: 3})
	out := write(t, r)

	var doc struct {
		DisplayTimeUnit string           `json:"displayTimeUnit"`
		OtherData       map[string]any   `json:"otherData"`
		TraceEvents     []map[string]any `json:"traceEvents"`
	}
	require.NoError(t, json.Unmarshal(out, &doc), "%s", out)
	require.Equal(t, "ms", doc.DisplayTimeUnit)
	require.EqualValues(t, 3, doc.OtherData["runs_kept"])
	require.EqualValues(t, 0, doc.OtherData["runs_overwritten"])

	var meta, runs []map[string]any
	for _, ev := range doc.TraceEvents {
		require.EqualValues(t, 42, ev["pid"], "%v", ev)
		switch ev["ph"] {
		case "M":
			meta = append(meta, ev)
		case "X":
			runs = append(runs, ev)
		default:
			t.Fatalf("unexpected event %v", ev)
		}
	}
	// process_name, then thread_name and thread_sort_index per worker.
	require.Len(t, meta, 5)
	require.Equal(t, "process_name", meta[0]["name"])
	require.Equal(t, map[string]any{"name": "robotexec"}, meta[0]["args"])
	require.Equal(t, "thread_name", meta[1]["name"])
	require.EqualValues(t, 1, meta[1]["tid"])
	require.Equal(t, map[string]any{"name": "worker 0"}, meta[1]["args"])
	require.Equal(t, "thread_name", meta[3]["name"])
	require.EqualValues(t, 2, meta[3]["tid"])
	require.Equal(t, map[string]any{"name": "worker 1"}, meta[3]["args"])

	require.Len(t, runs, 3)
	require.Equal(t, map[string]any{
		"ph": "X", "pid": 42.0, "tid": 1.0, "ts": 1.0, "dur": 0.999,
		"name": "filter: timer(100ms)", "cat": "timer",
		"args": map[string]any{"node": "filter", "callback": "timer(100ms)", "entity": 2.0, "latency_us": 0.001},
	}, runs[0])
	require.Equal(t, map[string]any{
		"ph": "X", "pid": 42.0, "tid": 1.0, "ts": 1.999, "dur": 2000.0,
		"name": `bridge: sensors/+/raw "q"`, "cat": "subscription",
		"args": map[string]any{"node": "bridge", "callback": `sensors/+/raw "q"`, "entity": 3.0},
	}, runs[1], "no latency_us when unknown")
	require.EqualValues(t, 2, runs[2]["tid"])
	require.EqualValues(t, 12.345, runs[2]["args"].(map[string]any)["latency_us"])

	s, err := tracecheck.ChromeTrace(bytes.NewReader(out))
	require.NoError(t, err)
	require.Equal(t, 3, s.Runs)
	require.Equal(t, map[int]int{1: 2, 2: 1}, s.PerTrack)
	require.Equal(t, map[uint64]int{2: 1, 3: 2}, s.PerEntity)
	require.Equal(t, map[int]string{1: "worker 0", 2: "worker 1"}, s.Threads)
	require.Equal(t, "robotexec", s.Process)
	require.Equal(t, int64(1_000), s.First)
	require.Equal(t, int64(1_999+2_000_000), s.Last)
}

func TestWriteEmpty(t *testing.T) {
	r := chrometrace.New(3, 10)
	var buf bytes.Buffer
	_, err := r.WriteTo(&buf, chrometrace.WriteOptions{})
	require.NoError(t, err)
	s, err := tracecheck.ChromeTrace(&buf)
	require.NoError(t, err)
	require.Zero(t, s.Runs)
	require.Len(t, s.Threads, 3, "one named track per worker, even an idle one")
}

func TestDefaultDescribe(t *testing.T) {
	r := chrometrace.New(1, 0)
	r.Add(0, chrometrace.Span{Start: 5, Dur: 1, ID: 7})
	var buf bytes.Buffer
	_, err := r.WriteTo(&buf, chrometrace.WriteOptions{})
	require.NoError(t, err)
	require.Contains(t, buf.String(), `"name":"entity 7"`)
	require.Contains(t, buf.String(), `"pid":1,`)
}

func TestRingKeepsNewest(t *testing.T) {
	const chunk = 4096
	tests := []struct {
		name       string
		limit, add int
		kept       int
	}{
		{"under one chunk", 1, 100, 100},
		{"one chunk, wrapped", 1, chunk + 10, 10},
		{"one chunk, exactly full", 1, chunk, chunk},
		{"three chunks, not full", 3 * chunk, 2*chunk + 5, 2*chunk + 5},
		{"three chunks, wrapped", 3 * chunk, 7*chunk + 5, 2*chunk + 5},
		{"three chunks, wrapped at a chunk's end", 3 * chunk, 6 * chunk, 3 * chunk},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := chrometrace.New(1, tt.limit)
			for i := range tt.add {
				r.Add(0, chrometrace.Span{Start: int64(i) * 10, Dur: 10, ID: uint64(i)})
			}
			kept, added := r.Len()
			require.Equal(t, tt.kept, kept)
			require.Equal(t, uint64(tt.add), added)
			s, err := tracecheck.ChromeTrace(bytes.NewReader(write(t, r)))
			require.NoError(t, err, "runs abut: each starts where the previous ended")
			require.Equal(t, tt.kept, s.Runs)
			// The newest are kept, oldest first.
			require.Equal(t, int64(tt.add-tt.kept)*10, s.First)
			require.Equal(t, int64(tt.add)*10, s.Last)
		})
	}
}

func TestLimitSplitAmongWorkers(t *testing.T) {
	r := chrometrace.New(2, 4*4096)
	for i := range 10 * 4096 {
		r.Add(i%2, chrometrace.Span{Start: int64(i), ID: 1})
	}
	kept, _ := r.Len()
	require.LessOrEqual(t, kept, 4*4096)
	require.Greater(t, kept, 2*4096)
}

func TestAddOutOfRange(t *testing.T) {
	r := chrometrace.New(1, 0)
	r.Add(-1, chrometrace.Span{})
	r.Add(1, chrometrace.Span{})
	kept, added := r.Len()
	require.Zero(t, kept)
	require.Zero(t, added)
}

func TestNewPanics(t *testing.T) {
	require.PanicsWithValue(t, "chrometrace: 0 workers", func() { chrometrace.New(0, 0) })
}

type failWriter struct{ after int }

func (f *failWriter) Write(p []byte) (int, error) {
	if f.after < len(p) {
		return 0, errors.New("disk full")
	}
	f.after -= len(p)
	return len(p), nil
}

func TestWriteError(t *testing.T) {
	r := chrometrace.New(1, 0)
	for i := range 10_000 {
		r.Add(0, chrometrace.Span{Start: int64(i), ID: 1})
	}
	for _, after := range []int{0, 100_000} {
		_, err := r.WriteTo(&failWriter{after: after}, chrometrace.WriteOptions{})
		require.ErrorContains(t, err, "disk full", "failing after %d bytes", after)
	}
}

func BenchmarkAdd(b *testing.B) {
	b.ReportAllocs()
	r := chrometrace.New(1, 1<<16)
	for i := range b.N {
		r.Add(0, chrometrace.Span{Start: int64(i), Dur: 1, ID: 1})
	}
}

func TestNsPerUnit(t *testing.T) {
	r := chrometrace.New(1, 0)
	// At 3 units a nanosecond, runs that abut in units abut in
	// nanoseconds, and a start before the origin is written as 0.
	// Latencies are in nanoseconds whatever the unit.
	r.Add(0, chrometrace.Span{Start: -5, Dur: 10, Latency: -1, ID: 1})
	r.Add(0, chrometrace.Span{Start: 5, Dur: 3001, Latency: 1000, ID: 1})
	r.Add(0, chrometrace.Span{Start: 3006, Dur: 1, Latency: 0, ID: 1})
	var buf bytes.Buffer
	_, err := r.WriteTo(&buf, chrometrace.WriteOptions{NsPerUnit: 1.0 / 3})
	require.NoError(t, err)
	out := buf.String()
	require.Contains(t, out, `"ts":0,"dur":0.001,`)
	require.Contains(t, out, `"ts":0.001,"dur":1.001,`)
	require.Contains(t, out, `"latency_us":1}`)
	require.Contains(t, out, `"ts":1.002,"dur":0,`)
	_, err = tracecheck.ChromeTrace(&buf)
	require.NoError(t, err)
}
