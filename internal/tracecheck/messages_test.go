package tracecheck_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/tracecheck"
)

// workload records two publishers' messages: p1 on robot/a (1, 2, 3), p2
// on robot/b (x, y), and "dup", which both publish on robot/a.
func workload(t *testing.T) *tracecheck.Messages {
	var m tracecheck.Messages
	require.NoError(t, m.Subscribe("all", "robot/+"))
	require.NoError(t, m.Subscribe("a", "$share/g/robot/a"))
	for _, p := range []struct{ pub, topic, payload string }{
		{"p1", "robot/a", "1"}, {"p2", "robot/b", "x"}, {"p1", "robot/a", "2"},
		{"p1", "robot/a", "dup"}, {"p2", "robot/a", "dup"},
		{"p2", "robot/b", "y"}, {"p1", "robot/a", "3"},
	} {
		m.Published(p.pub, p.topic, []byte(p.payload))
	}
	return &m
}

func deliver(m *tracecheck.Messages, name string, payloads ...string) {
	for _, p := range payloads {
		m.Delivered(name, []byte(p))
	}
}

// Every message once, each publisher's in order, interleaved in any way,
// passes; a payload two publishers send is counted but not ordered.
func TestMessagesAcceptsExactlyOnceInOrder(t *testing.T) {
	m := workload(t)
	require.Equal(t, 7, m.Expected("all"))
	require.Equal(t, 5, m.Expected("a"), "the shared subscription expects every message of its filter")
	require.Equal(t, 4, m.ExpectedFrom("a", "p1"))
	require.Equal(t, 1, m.ExpectedFrom("a", "p2"))
	require.Equal(t, 0, m.ExpectedFrom("a", "p3"))

	deliver(m, "all", "x", "dup", "1", "y", "2", "dup", "3")
	deliver(m, "a", "1", "dup", "2", "3", "dup")
	require.Equal(t, 7, m.Count("all"))
	require.Equal(t, 5, m.Count("a"))
	require.NoError(t, m.Check())
}

func TestMessagesFindsViolations(t *testing.T) {
	tests := []struct {
		name      string
		all, a    []string // what the two subscriptions got
		want      []string
		wantFewer []string // what the report must not hold
	}{
		{"lost", []string{"1", "x", "2", "dup", "dup", "y"}, []string{"1", "2", "dup", "dup", "3"},
			[]string{`subscription all (robot/+): not exactly once: ["3" 0 times, not 1]`}, []string{"subscription a "}},
		{"twice", []string{"1", "x", "2", "dup", "dup", "y", "3", "3"}, []string{"1", "2", "dup", "dup", "3"},
			[]string{`not exactly once: ["3" 2 times, not 1]`}, []string{"out of order"}},
		{"shared payload once", []string{"1", "x", "2", "dup", "y", "3"}, []string{"1", "2", "dup", "dup", "3"},
			[]string{`not exactly once: ["dup" 1 times, not 2]`}, nil},
		{"unexpected", []string{"1", "x", "2", "dup", "dup", "y", "3"}, []string{"1", "2", "dup", "dup", "3", "x"},
			[]string{`subscription a (robot/a): not exactly once: ["x" 1 times, not 0]`}, nil},
		{"out of order", []string{"1", "x", "3", "dup", "dup", "y", "2"}, []string{"1", "2", "dup", "dup", "3"},
			[]string{"subscription all (robot/+): publisher p1 out of order at its message 1: [1 3 2]"}, []string{"p2 out of order"}},
		{"two publishers out of order", []string{"y", "x", "2", "1", "3", "dup", "dup"}, []string{"1", "2", "dup", "dup", "3"},
			[]string{"publisher p1 out of order at its message 0: [2 1 3]", "publisher p2 out of order at its message 0: [y x]"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := workload(t)
			deliver(m, "all", tc.all...)
			deliver(m, "a", tc.a...)
			err := m.Check()
			require.Error(t, err)
			for _, w := range tc.want {
				require.ErrorContains(t, err, w)
			}
			for _, w := range tc.wantFewer {
				require.NotContains(t, err.Error(), w)
			}
		})
	}
}

// A lost message is reported as lost, not also as the publisher's order
// broken where it is missing: the order is checked once the counts agree.
func TestMessagesOrderAfterAShortDelivery(t *testing.T) {
	var m tracecheck.Messages
	require.NoError(t, m.Subscribe("s", "t"))
	for i := range 3 {
		m.Published("p", "t", fmt.Appendf(nil, "%d", i))
	}
	deliver(&m, "s", "0", "1")
	require.EqualError(t, m.Check(), `subscription s (t): not exactly once: ["2" 0 times, not 1]`)
}

// Many differences are listed up to the cap, then counted.
func TestMessagesCapsTheDifferences(t *testing.T) {
	var m tracecheck.Messages
	require.NoError(t, m.Subscribe("s", "t/#"))
	for i := range 25 {
		m.Published("p", "t/x", fmt.Appendf(nil, "m%02d", i))
	}
	err := m.Check()
	require.ErrorContains(t, err, `"m00" 0 times, not 1`)
	require.ErrorContains(t, err, `"m19" 0 times, not 1 and 5 more]`)
	require.NotContains(t, err.Error(), `"m20"`)
}

func TestMessagesSubscribeRejectsABadFilter(t *testing.T) {
	var m tracecheck.Messages
	require.Error(t, m.Subscribe("s", "a/#/b"))
	require.Error(t, m.Subscribe("s", "$share/g"))
}
