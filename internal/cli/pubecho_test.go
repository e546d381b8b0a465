package cli

// Tests of pub and echo on the embedded broker of a robotexec instance,
// with a paho client on the other side.

import (
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/stretchr/testify/require"
)

// TestEcho: echo -n N prints the first N messages matching its filter,
// one a line, TOPIC PAYLOAD, and exits 0.
func TestEcho(t *testing.T) {
	t.Parallel()
	a := startApp(t, "cli-echo", "  - { name: beat, type: heartbeat, params: { topic: robot/heartbeat, period: 20ms } }\n")
	r := startCLI("echo", "-broker", a.url, "-n", "3", "robot/+").wait(t, traffic)
	require.Equal(t, ExitOK, r.code, "%s", r)
	require.Empty(t, r.stderr)
	ls := lines(r.stdout)
	require.Len(t, ls, 3, "%s", r)
	var seqs []int
	for _, l := range ls {
		payload, ok := strings.CutPrefix(l, "robot/heartbeat ")
		require.True(t, ok, "line %q", l)
		var beat struct {
			Node string
			Seq  int
		}
		require.NoError(t, json.Unmarshal([]byte(payload), &beat), "line %q", l)
		require.Equal(t, "beat", beat.Node)
		seqs = append(seqs, beat.Seq)
	}
	require.Equal(t, []int{seqs[0], seqs[0] + 1, seqs[0] + 2}, seqs, "consecutive beats, in order")
}

// TestPub: pub publishes one message and exits 0 once the broker has it;
// -retain keeps it for a later subscriber.
func TestPub(t *testing.T) {
	t.Parallel()
	a := startApp(t, "cli-pub", "  - { name: beat, type: heartbeat, params: { topic: robot/heartbeat, period: 1h } }\n")
	got := make(chan string, 10)
	sub := pahoClient(t, a.url, "cli-pub-watcher")
	tok := sub.Subscribe("cli/pub/#", 2, func(_ paho.Client, m paho.Message) { got <- m.Topic() + " " + string(m.Payload()) })
	require.True(t, tok.WaitTimeout(traffic) && tok.Error() == nil, "subscribe: %v", tok.Error())

	for _, qos := range []string{"0", "1", "2"} {
		r := cli(t, "pub", "-broker", a.url, "-qos", qos, "cli/pub/q"+qos, "hello at qos "+qos)
		require.Equal(t, ExitOK, r.code, "%s", r)
		require.Empty(t, r.stdout)
		require.Empty(t, r.stderr)
		select {
		case m := <-got:
			require.Equal(t, "cli/pub/q"+qos+" hello at qos "+qos, m)
		case <-time.After(traffic):
			t.Fatalf("qos %s: the message did not arrive", qos)
		}
	}

	r := cli(t, "pub", "-broker", a.url, "-retain", "-qos", "1", "cli/kept", "kept message")
	require.Equal(t, ExitOK, r.code, "%s", r)
	r = startCLI("echo", "-broker", a.url, "-qos", "2", "-n", "1", "cli/kept").wait(t, traffic)
	require.Equal(t, ExitOK, r.code, "%s", r)
	require.Equal(t, "cli/kept kept message\n", r.stdout, "the retained message, to a later subscriber")
}

// TestPubEchoErrors: a bad command line is exit 2, found before any
// connection; a broker that is not there is exit 1, naming it.
func TestPubEchoErrors(t *testing.T) {
	t.Parallel()
	dead := unreachable(t)
	silent, err := net.Listen("tcp", "127.0.0.1:0") // accepts, never answers
	require.NoError(t, err)
	t.Cleanup(func() { silent.Close() })
	quiet := "tcp://" + silent.Addr().String()
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr []string
	}{
		{"pub without broker", []string{"pub", "-broker", dead, "-timeout", refusedWait, "a/b", "x"}, ExitFailure, []string{"robotexec pub: ", "connection refused"}},
		{"echo without broker", []string{"echo", "-broker", dead, "-timeout", refusedWait, "a/#"}, ExitFailure, []string{"robotexec echo: ", "connection refused"}},
		{"pub to a broker that does not answer", []string{"pub", "-broker", quiet, "-timeout", "300ms", "a/b", "x"}, ExitFailure, []string{"robotexec pub: cannot connect to " + quiet}},
		{"pub with one argument", []string{"pub", "a/b"}, ExitUsage, []string{"robotexec pub: want TOPIC and PAYLOAD", "Usage: robotexec pub"}},
		{"pub with three arguments", []string{"pub", "a/b", "x", "y"}, ExitUsage, []string{"robotexec pub: want TOPIC and PAYLOAD"}},
		{"pub wildcard topic", []string{"pub", "a/+/b", "x"}, ExitUsage, []string{"robotexec pub: ", `"a/+/b"`, "wildcards"}},
		{"pub empty topic", []string{"pub", "", "x"}, ExitUsage, []string{"robotexec pub: "}},
		{"pub -qos 3", []string{"pub", "-qos", "3", "a/b", "x"}, ExitUsage, []string{"robotexec pub: -qos 3: want 0, 1 or 2\n"}},
		{"pub -qos -1", []string{"pub", "-qos", "-1", "a/b", "x"}, ExitUsage, []string{"robotexec pub: -qos -1: want 0, 1 or 2\n"}},
		{"echo without filter", []string{"echo"}, ExitUsage, []string{"robotexec echo: want one TOPIC_FILTER", "Usage: robotexec echo"}},
		{"echo with two filters", []string{"echo", "a/#", "b/#"}, ExitUsage, []string{"robotexec echo: want one TOPIC_FILTER"}},
		{"echo bad filter", []string{"echo", "a/#/b"}, ExitUsage, []string{"robotexec echo: ", `"a/#/b"`, "'#' must be the last level"}},
		{"echo -qos 3", []string{"echo", "-qos", "3", "a/b"}, ExitUsage, []string{"robotexec echo: -qos wants 0, 1 or 2 and -n zero or more"}},
		{"echo -n -1", []string{"echo", "-n", "-1", "a/b"}, ExitUsage, []string{"robotexec echo: -qos wants 0, 1 or 2 and -n zero or more"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			r := cli(t, tt.args...)
			require.Equal(t, tt.code, r.code, "%s", r)
			require.Empty(t, r.stdout)
			for _, w := range tt.stderr {
				require.Contains(t, r.stderr, w)
			}
			if tt.code == ExitFailure {
				require.Less(t, time.Since(start), 5*time.Second, "-timeout bounds the wait")
			}
		})
	}
}
