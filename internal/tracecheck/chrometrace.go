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
	s := &ChromeSummary{PerTrack: map[int]int{}, PerEntity: map[uint64]int{}, Threads: map[int]string{}, First: -1}
	lastEnd := map[int]int64{}
	lastStart := map[int]int64{}
	for i, ev := range doc.TraceEvents {
		where := fmt.Sprintf("tracecheck: chrome trace: traceEvents[%d]", i)
		ph, ok := ev["ph"].(string)
		if !ok {
			return nil, fmt.Errorf("%s: no ph", where)
		}
		if _, err := integer(ev, "pid"); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		tid64, err := integer(ev, "tid")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		tid := int(tid64)
		name, _ := ev["name"].(string)
		args, _ := ev["args"].(map[string]any)
		switch ph {
		case "M":
			if args == nil {
				return nil, fmt.Errorf("%s: metadata without args", where)
			}
			switch name {
			case "thread_name":
				n, ok := args["name"].(string)
				if !ok {
					return nil, fmt.Errorf("%s: thread_name without a name", where)
				}
				s.Threads[tid] = n
			case "process_name":
				s.Process, _ = args["name"].(string)
			}
		case "X":
			ts, err := micros(ev, "ts")
			if err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			dur, err := micros(ev, "dur")
			if err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			if ts < 0 || dur < 0 {
				return nil, fmt.Errorf("%s: negative ts %d ns or dur %d ns", where, ts, dur)
			}
			if name == "" {
				return nil, fmt.Errorf("%s: run without a name", where)
			}
			if args == nil {
				return nil, fmt.Errorf("%s: run without args", where)
			}
			for _, k := range []string{"node", "callback"} {
				if _, ok := args[k].(string); !ok {
					return nil, fmt.Errorf("%s: args.%s is not a string", where, k)
				}
			}
			ent, err := integer(args, "entity")
			if err != nil {
				return nil, fmt.Errorf("%s: args: %w", where, err)
			}
			if prev, ok := lastStart[tid]; ok && ts < prev {
				return nil, fmt.Errorf("%s: tid %d: run starts at %d ns, before the previous one (%d ns)", where, tid, ts, prev)
			}
			if end, ok := lastEnd[tid]; ok && ts < end {
				return nil, fmt.Errorf("%s: tid %d: run at %d ns overlaps the previous one, which ends at %d ns", where, tid, ts, end)
			}
			lastStart[tid], lastEnd[tid] = ts, ts+dur
			s.Runs++
			s.PerTrack[tid]++
			s.PerEntity[uint64(ent)]++
			if s.First < 0 || ts < s.First {
				s.First = ts
			}
			s.Last = max(s.Last, ts+dur)
		}
	}
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
