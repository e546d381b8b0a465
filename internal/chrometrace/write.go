package chrometrace

import (
	"bufio"
	"encoding/json"
	"io"
	"strconv"
)

// Entity names what a span's ID ran, for the trace's events.
type Entity struct {
	// Node and Callback are the owner's and the callback's names.
	Node, Callback string
	// Kind is the event's category: "timer" or "subscription".
	Kind string
}

// WriteOptions describe the trace that WriteTo writes.
type WriteOptions struct {
	// PID is the events' process ID. (optional) Defaults to 1.
	PID int
	// Process names the process track. (optional) Defaults to "robotexec".
	Process string
	// Describe names the entity of a span; it is called once per ID.
	// (optional) Defaults to naming every entity by its ID.
	Describe func(id uint64) Entity
	// NsPerUnit is the number of nanoseconds in a unit of the spans'
	// Start and Dur, for a recorder fed with clock ticks. (optional) Defaults to
	// 1: the spans are in nanoseconds.
	NsPerUnit float64
}

// counter counts the bytes written through it.
type counter struct {
	w io.Writer
	n int64
}

func (c *counter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// WriteTo writes the recorded spans to w as Chrome trace-event JSON (the
// JSON Object Format), each worker's oldest first, and returns the number
// of bytes written. It must not run concurrently with Add.
func (r *Recorder) WriteTo(w io.Writer, opts WriteOptions) (int64, error) {
	if opts.PID == 0 {
		opts.PID = 1
	}
	if opts.Process == "" {
		opts.Process = "robotexec"
	}
	ns := func(t int64) int64 { return t }
	if f := opts.NsPerUnit; f != 0 && f != 1 {
		ns = func(t int64) int64 { return int64(float64(t) * f) }
	}
	cw := &counter{w: w}
	bw := bufio.NewWriterSize(cw, 64<<10)
	kept, added := r.Len()
	pid := strconv.Itoa(opts.PID)

	b := r.appendHeader(make([]byte, 0, 512), opts.Process, pid, kept, added)
	if _, err := bw.Write(b); err != nil {
		return cw.n, err
	}

	names := map[uint64][]byte{} // ID → the event's name, cat and args up to latency
	for i := range r.tracks {
		prefix := []byte(",\n" + `{"ph":"X","pid":` + pid + `,"tid":` + strconv.Itoa(i+1) + `,"ts":`)
		err := r.tracks[i].each(func(spans []Span) error {
			for _, s := range spans {
				desc, ok := names[s.ID]
				if !ok {
					desc = describe(s.ID, opts.Describe)
					names[s.ID] = desc
				}
				b = appendSpan(b[:0], prefix, desc, s, ns)
				if _, err := bw.Write(b); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return cw.n, err
		}
	}
	if _, err := bw.WriteString("\n]}\n"); err != nil {
		return cw.n, err
	}
	err := bw.Flush()
	return cw.n, err
}

// appendHeader appends the trace's opening: its counts of runs, the
// process's name and a named, sorted track for each worker.
func (r *Recorder) appendHeader(b []byte, process, pid string, kept int, added uint64) []byte {
	b = append(b, `{"displayTimeUnit":"ms","otherData":{"runs_kept":`...)
	b = strconv.AppendInt(b, int64(kept), 10)
	b = append(b, `,"runs_overwritten":`...)
	b = strconv.AppendUint(b, added-uint64(kept), 10)
	b = append(b, "},\"traceEvents\":[\n"...)
	b = append(b, `{"ph":"M","name":"process_name","pid":`+pid+`,"tid":0,"args":{"name":`...)
	b = appendString(b, process)
	b = append(b, "}}"...)
	for i := range r.tracks {
		tid := strconv.Itoa(i + 1)
		b = append(b, ",\n"+`{"ph":"M","name":"thread_name","pid":`+pid+`,"tid":`+tid+`,"args":{"name":"worker `+strconv.Itoa(i)+`"}}`...)
		b = append(b, ",\n"+`{"ph":"M","name":"thread_sort_index","pid":`+pid+`,"tid":`+tid+`,"args":{"sort_index":`+tid+`}}`...)
	}
	return b
}

// appendSpan appends the X event of run s: prefix (its track), its start
// and duration, desc (its name, category and args) and its latency, with
// ns converting the recorder's ticks.
func appendSpan(b, prefix, desc []byte, s Span, ns func(int64) int64) []byte {
	// The end is converted, not the duration, so that runs that abut in
	// ticks abut in nanoseconds.
	start := ns(max(s.Start, 0))
	end := ns(max(s.Start+max(s.Dur, 0), 0))
	b = append(b, prefix...)
	b = appendMicros(b, start)
	b = append(b, `,"dur":`...)
	b = appendMicros(b, end-start)
	b = append(b, desc...)
	if s.Latency >= 0 {
		b = append(b, `,"latency_us":`...)
		b = appendMicros(b, s.Latency)
	}
	return append(b, "}}"...)
}

// describe returns the part of an X event from its name to its args'
// entity, without the closing braces.
func describe(id uint64, f func(uint64) Entity) []byte {
	e := Entity{Callback: "entity " + strconv.FormatUint(id, 10)}
	if f != nil {
		e = f(id)
	}
	name := e.Callback
	if e.Node != "" {
		name = e.Node + ": " + e.Callback
	}
	b := []byte(`,"name":`)
	b = appendString(b, name)
	if e.Kind != "" {
		b = append(b, `,"cat":`...)
		b = appendString(b, e.Kind)
	}
	b = append(b, `,"args":{"node":`...)
	b = appendString(b, e.Node)
	b = append(b, `,"callback":`...)
	b = appendString(b, e.Callback)
	b = append(b, `,"entity":`...)
	b = strconv.AppendUint(b, id, 10)
	return b
}

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte {
	q, err := json.Marshal(s)
	if err != nil {
		// A string always marshals; invalid UTF-8 is replaced.
		panic("chrometrace: " + err.Error())
	}
	return append(b, q...)
}

// appendMicros appends ns nanoseconds as microseconds, with up to three
// decimals and no trailing zeros: exact, so that a run that starts when
// the previous one ends never seems to overlap it.
func appendMicros(b []byte, ns int64) []byte {
	if ns < 0 {
		b = append(b, '-')
		ns = -ns
	}
	b = strconv.AppendInt(b, ns/1000, 10)
	frac := ns % 1000
	if frac == 0 {
		return b
	}
	digits := [3]byte{byte('0' + frac/100), byte('0' + frac/10%10), byte('0' + frac%10)}
	n := 3
	for digits[n-1] == '0' {
		n--
	}
	b = append(b, '.')
	return append(b, digits[:n]...)
}
