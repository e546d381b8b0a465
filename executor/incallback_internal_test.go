package executor

import (
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// deep calls f from depth nested calls.
func deep(depth int, f func()) {
	if depth == 0 {
		f()
		return
	}
	deep(depth-1, f)
}

// TestInCallback: inCallback finds callTimer and callMessage however deep
// the callback's stack, and not on a goroutine that a callback started,
// nor outside callbacks.
func TestInCallback(t *testing.T) {
	e := New(Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.False(t, inCallback(), "outside a callback")
	for _, depth := range []int{0, 10, 300, 2000} {
		var got, fromGoroutine bool
		check := func() {
			got = inCallback()
			done := make(chan struct{})
			go func() { defer close(done); fromGoroutine = inCallback() }()
			<-done
		}
		e.callTimer(&entity{onTimer: func(timers.Event) { deep(depth, check) }}, timers.Event{})
		require.True(t, got, "a timer's callback, %d calls deep", depth)
		require.False(t, fromGoroutine, "a goroutine started %d calls deep", depth)
		got = false
		e.callMessage(&entity{onMsg: func(subscribers.Message) { deep(depth, check) }}, &subscribers.Message{})
		require.True(t, got, "a subscription's callback, %d calls deep", depth)
	}
}

// BenchmarkInCallback measures inCallback from a callback 10 calls deep,
// about what a node's callback adds to the worker's frames.
func BenchmarkInCallback(b *testing.B) {
	e := New(Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	e.callTimer(&entity{onTimer: func(timers.Event) {
		deep(10, func() {
			for b.Loop() {
				if !inCallback() {
					b.Fatal("not in a callback")
				}
			}
		})
	}}, timers.Event{})
}
