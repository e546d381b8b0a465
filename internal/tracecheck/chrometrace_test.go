package tracecheck_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/tracecheck"
)

func TestChromeTraceRejects(t *testing.T) {
	meta := `{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"worker 0"}}`
	run := func(ts, dur string) string {
		return fmt.Sprintf(`{"ph":"X","name":"n","pid":1,"tid":1,"ts":%s,"dur":%s,"args":{"node":"a","callback":"b","entity":1}}`, ts, dur)
	}
	doc := func(evs ...string) string { return `{"traceEvents":[` + strings.Join(evs, ",") + `]}` }
	tests := []struct{ name, trace, want string }{
		{"not json", `[`, "not a JSON object trace"},
		{"no events", `{}`, "no traceEvents"},
		{"bad unit", `{"traceEvents":[],"displayTimeUnit":"s"}`, "displayTimeUnit"},
		{"no ph", doc(`{"pid":1,"tid":1}`), "no ph"},
		{"string tid", doc(`{"ph":"X","pid":1,"tid":"1"}`), "tid is not a number"},
		{"no ts", doc(meta, `{"ph":"X","name":"n","pid":1,"tid":1,"dur":1,"args":{}}`), "ts is not a number"},
		{"negative dur", doc(meta, run("1", "-1")), "negative"},
		{"no name", doc(meta, `{"ph":"X","pid":1,"tid":1,"ts":1,"dur":1,"args":{"node":"a","callback":"b","entity":1}}`), "without a name"},
		{"no args", doc(meta, `{"ph":"X","name":"n","pid":1,"tid":1,"ts":1,"dur":1}`), "without args"},
		{"no node", doc(meta, `{"ph":"X","name":"n","pid":1,"tid":1,"ts":1,"dur":1,"args":{"callback":"b","entity":1}}`), "args.node"},
		{"no entity", doc(meta, `{"ph":"X","name":"n","pid":1,"tid":1,"ts":1,"dur":1,"args":{"node":"a","callback":"b"}}`), "entity"},
		{"overlap", doc(meta, run("1", "2"), run("2.999", "1")), "overlaps"},
		{"out of order", doc(meta, run("5", "0"), run("4", "0")), "before the previous"},
		{"unnamed track", doc(run("1", "1")), "no thread_name"},
		{"metadata without args", doc(`{"ph":"M","name":"thread_name","pid":1,"tid":1}`), "without args"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tracecheck.ChromeTrace(strings.NewReader(tt.trace))
			require.ErrorContains(t, err, tt.want)
		})
	}
	s, err := tracecheck.ChromeTrace(strings.NewReader(doc(meta, run("1", "2"), run("3", "1e-3"), run("3.001", "0"))))
	require.NoError(t, err, "runs that abut do not overlap")
	require.Equal(t, 3, s.Runs)
}
