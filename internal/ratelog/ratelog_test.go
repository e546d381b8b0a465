package ratelog_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/ratelog"
)

func TestFloodGivesOneLinePerIntervalWithCounts(t *testing.T) {
	now := time.Unix(0, 0)
	l := ratelog.NewWithClock(time.Second, func() time.Time { return now })
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, nil))
	for i := range 1000 {
		now = time.Unix(0, 0).Add(time.Duration(i) * 10 * time.Millisecond) // 100 per second for 10 s
		l.Log(logger, slog.LevelWarn, "bad payload", "topic", "x")
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 10)
	require.NotContains(t, lines[0], "suppressed")
	for _, line := range lines[1:] {
		require.Contains(t, line, "suppressed=99")
	}
}

func TestAllow(t *testing.T) {
	now := time.Unix(100, 0)
	l := ratelog.NewWithClock(time.Minute, func() time.Time { return now })
	ok, n := l.Allow()
	require.True(t, ok)
	require.Zero(t, n)
	ok, _ = l.Allow()
	require.False(t, ok)
	now = now.Add(time.Minute)
	ok, n = l.Allow()
	require.True(t, ok)
	require.Equal(t, 1, n)
	require.NotNil(t, ratelog.New(0))
}
