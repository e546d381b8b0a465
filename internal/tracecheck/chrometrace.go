package tracecheck

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ChromeSummary is what ChromeTrace found in a trace.
type ChromeSummary struct {
	// Runs counts the complete (X) events.
	Runs int
	// PerTrack counts the complete events of each tid.
	PerTrack map[int]int
	// PerEntity counts the complete events of each entity (args.entity).
	PerEntity map[uint64]int
	// Threads maps each named tid to its thread_name.
	Threads map[int]string
	// Process is the process_name, if any.
	Process string
	// First and Last are the earliest start and the latest end of a run,
	// in nanoseconds.
	First, Last int64
}

// ChromeTrace reads a Chrome trace in the JSON Object Format, as
// chrometrace.Recorder.WriteTo writes it and Perfetto loads it, and checks
// it independently of the writer: every event has a ph, a pid and a tid;
// every complete event ("ph":"X") has numeric ts ≥ 0 and dur ≥ 0, a name,
// and args with node, callback and entity; each tid with runs is named by
// a thread_name metadata event; and on each tid, runs start in order and
// never overlap.
func ChromeTrace(r io.Reader) (*ChromeSummary, error) {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	var doc struct {
		TraceEvents     []map[string]any `json:"traceEvents"`
		DisplayTimeUnit string           `json:"displayTimeUnit"`
	}
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("tracecheck: chrome trace: not a JSON object trace: %w", err)
	}
	if doc.TraceEvents == nil {
		return nil, errors.New("tracecheck: chrome trace: no traceEvents array")
	}
	if u := doc.DisplayTimeUnit; u != "" && u != "ms" && u != "ns" {
		return nil, fmt.Errorf("tracecheck: chrome trace: displayTimeUnit %q is not ms or ns", u)
	}
	c := &chromeReader{
		s:         &ChromeSummary{PerTrack: map[int]int{}, PerEntity: map[uint64]int{}, Threads: map[int]string{}, First: -1},
		lastEnd:   map[int]int64{},
		lastStart: map[int]int64{},
	}
	for i, ev := range doc.TraceEvents {
		if err := c.event(ev); err != nil {
			return nil, fmt.Errorf("tracecheck: chrome trace: traceEvents[%d]: %w", i, err)
		}
	}
	s := c.s
	for tid := range s.PerTrack {
		if _, ok := s.Threads[tid]; !ok {
			return nil, fmt.Errorf("tracecheck: chrome trace: tid %d has runs but no thread_name", tid)
		}
	}
	if s.First < 0 {
		s.First = 0
	}
	return s, nil
}

// chromeReader checks a trace's events one by one into a summary.
type chromeReader struct {
	s                  *ChromeSummary
	lastEnd, lastStart map[int]int64 // per track
}

// event checks one event: metadata (M) names tracks, complete events (X)
// are runs.
func (c *chromeReader) event(ev map[string]any) error {
	ph, ok := ev["ph"].(string)
	if !ok {
		return errors.New("no ph")
	}
	if _, err := integer(ev, "pid"); err != nil {
		return err
	}
	tid, err := integer(ev, "tid")
	if err != nil {
		return err
	}
	name, _ := ev["name"].(string)
	args, _ := ev["args"].(map[string]any)
	switch ph {
	case "M":
		return c.metadata(int(tid), name, args)
	case "X":
		return c.run(ev, int(tid), name, args)
	}
	return nil
}

// metadata reads a thread's or the process's name.
func (c *chromeReader) metadata(tid int, name string, args map[string]any) error {
	if args == nil {
		return errors.New("metadata without args")
	}
	switch name {
	case "thread_name":
		n, ok := args["name"].(string)
		if !ok {
			return errors.New("thread_name without a name")
		}
		c.s.Threads[tid] = n
	case "process_name":
		c.s.Process, _ = args["name"].(string)
	}
	return nil
}

// run checks a run's fields and that it neither starts before nor
// overlaps the previous run of its track, and counts it.
func (c *chromeReader) run(ev map[string]any, tid int, name string, args map[string]any) error {
	ts, err := micros(ev, "ts")
	if err != nil {
		return err
	}
	dur, err := micros(ev, "dur")
	if err != nil {
		return err
	}
	if ts < 0 || dur < 0 {
		return fmt.Errorf("negative ts %d ns or dur %d ns", ts, dur)
	}
	if name == "" {
		return errors.New("run without a name")
	}
	if args == nil {
		return errors.New("run without args")
	}
	for _, k := range []string{"node", "callback"} {
		if _, ok := args[k].(string); !ok {
			return fmt.Errorf("args.%s is not a string", k)
		}
	}
	ent, err := integer(args, "entity")
	if err != nil {
		return fmt.Errorf("args: %w", err)
	}
	if prev, ok := c.lastStart[tid]; ok && ts < prev {
		return fmt.Errorf("tid %d: run starts at %d ns, before the previous one (%d ns)", tid, ts, prev)
	}
	if end, ok := c.lastEnd[tid]; ok && ts < end {
		return fmt.Errorf("tid %d: run at %d ns overlaps the previous one, which ends at %d ns", tid, ts, end)
	}
	c.lastStart[tid], c.lastEnd[tid] = ts, ts+dur
	s := c.s
	s.Runs++
	s.PerTrack[tid]++
	s.PerEntity[uint64(ent)]++
	if s.First < 0 || ts < s.First {
		s.First = ts
	}
	s.Last = max(s.Last, ts+dur)
	return nil
}

// integer returns m[k] as an integer.
func integer(m map[string]any, k string) (int64, error) {
	n, ok := m[k].(json.Number)
	if !ok {
		return 0, fmt.Errorf("%s is not a number", k)
	}
	v, err := n.Int64()
	if err != nil {
		return 0, fmt.Errorf("%s: %w", k, err)
	}
	return v, nil
}

// micros returns m[k], a number of microseconds, in nanoseconds, exactly
// up to three decimals.
func micros(m map[string]any, k string) (int64, error) {
	n, ok := m[k].(json.Number)
	if !ok {
		return 0, fmt.Errorf("%s is not a number", k)
	}
	str := n.String()
	if strings.ContainsAny(str, "eE") {
		f, err := n.Float64()
		if err != nil {
			return 0, fmt.Errorf("%s: %w", k, err)
		}
		return int64(f * 1000), nil
	}
	whole, frac, _ := strings.Cut(str, ".")
	neg := strings.HasPrefix(whole, "-")
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", k, err)
	}
	frac = (frac + "000")[:3]
	f, err := strconv.ParseInt(frac, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", k, err)
	}
	if neg {
		return w*1000 - f, nil
	}
	return w*1000 + f, nil
}
