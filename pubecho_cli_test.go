package robotexec_test

// End-to-end tests of pub and echo: their errors.

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestPubEchoErrors(t *testing.T) {
	t.Parallel()
	dead := brokerURL(freePort(t))
	conn := []string{"-broker", dead, "-timeout", "1s"}
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr []string
	}{
		{"pub without broker", []string{"pub", "a/b", "x"}, 1, []string{"robotexec pub: ", dead}},
		{"echo without broker", []string{"echo", "a/#"}, 1, []string{"robotexec echo: ", dead}},
		{"pub wildcard topic", []string{"pub", "a/+/b", "x"}, 2, []string{"robotexec pub: ", `"a/+/b"`, "wildcards"}},
		{"pub hash topic", []string{"pub", "a/#", "x"}, 2, []string{"robotexec pub: ", `"a/#"`}},
		{"pub empty topic", []string{"pub", "", "x"}, 2, []string{"robotexec pub: "}},
		{"echo bad filter", []string{"echo", "a/#/b"}, 2, []string{"robotexec echo: ", `"a/#/b"`, "'#' must be the last level"}},
		{"echo bad plus", []string{"echo", "a/b+/c"}, 2, []string{"robotexec echo: ", `"a/b+/c"`}},
		{"pub -qos 3", []string{"pub", "-qos", "3", "a/b", "x"}, 2, []string{"robotexec pub: -qos 3: want 0, 1 or 2"}},
		{"pub -qos -1", []string{"pub", "-qos", "-1", "a/b", "x"}, 2, []string{"-qos -1"}},
		{"pub -qos x", []string{"pub", "-qos", "x", "a/b", "x"}, 2, []string{`invalid value "x" for flag -qos`}},
		{"echo -qos 3", []string{"echo", "-qos", "3", "a/b"}, 2, []string{"robotexec echo: -qos"}},
		{"echo -n -1", []string{"echo", "-n", "-1", "a/b"}, 2, []string{"robotexec echo: ", "-n"}},
		{"echo -n x", []string{"echo", "-n", "x", "a/b"}, 2, []string{`invalid value "x" for flag -n`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// The connection flags go first, so that a usage error is
			// found before any connection attempt, which would take 1s.
			args := append(append([]string{tt.args[0]}, conn...), tt.args[1:]...)
			start := time.Now()
			r := runCmd(t, quickExit, robotexecBin, nil, args...)
			require.Equal(t, tt.code, r.code, "%s", r)
			require.Empty(t, r.stdout)
			for _, w := range tt.stderr {
				require.Contains(t, r.stderr, w)
			}
			if tt.code == 1 {
				require.Less(t, time.Since(start), 5*time.Second, "-timeout 1s")
			}
		})
	}
}
