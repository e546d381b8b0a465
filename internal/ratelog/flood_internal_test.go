package ratelog

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLimitFloods(t *testing.T) {
	var buf bytes.Buffer
	logger := LimitFloods(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	nodeA := logger.With("node", "a")
	for range 100 {
		// One line each: the callbacks, nodes and messages differ.
		nodeA.Error("executor: callback panicked", "callback", "x", "panic", "boom")
		nodeA.Error("executor: callback panicked", "callback", "y")
		logger.Error("executor: callback panicked", "node", "b", "callback", "x")
		logger.Warn("mqtt: connection lost, reconnecting", "error", "EOF")
		// Below Warn nothing is limited.
		logger.Info("mqtt: connected")
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	count := func(substr string) int {
		n := 0
		for _, l := range lines {
			if strings.Contains(l, substr) {
				n++
			}
		}
		return n
	}
	require.Equal(t, 1, count("node=a callback=x"))
	require.Equal(t, 1, count("node=a callback=y"))
	require.Equal(t, 1, count("node=b callback=x"))
	require.Equal(t, 1, count("connection lost"))
	require.Equal(t, 100, count("mqtt: connected"))
	require.Equal(t, 0, count("suppressed"), "the first line of each suppressed nothing before it")

	grouped := logger.WithGroup("g").With("node", "c")
	grouped.Error("e")
	grouped.Error("e")
	require.Equal(t, 1, strings.Count(buf.String(), "g.node=c"))

	// Past floodKeys distinct lines, new kinds share one limiter.
	buf.Reset()
	for i := range floodKeys + 10 {
		logger.Warn("w", "node", strings.Repeat("n", i%50)+string(rune('a'+i%26)), "callback", i)
	}
	require.Less(t, strings.Count(buf.String(), "\n"), floodKeys+10)
	require.Greater(t, strings.Count(buf.String(), "\n"), 0)

}
