// Package ratelog bounds repeated log lines: a flood of the same error gives
// at most one line per interval, each saying how many were suppressed since
// the last one. A [Limiter] bounds the lines that one call site logs;
// [LimitFloods] bounds a whole logger's repeated warnings and errors.
//
// A Limiter is safe for concurrent use.
package ratelog

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Limiter lets one line through per interval and counts the rest.
type Limiter struct {
	every time.Duration
	now   func() time.Time

	mu         sync.Mutex
	last       time.Time
	suppressed int
}

// New returns a limiter that lets one line through every interval (at
// least 1 ms).
func New(every time.Duration) *Limiter {
	return &Limiter{every: max(every, time.Millisecond), now: time.Now}
}

// NewWithClock is New with a clock of its own, for tests.
func NewWithClock(every time.Duration, now func() time.Time) *Limiter {
	l := New(every)
	l.now = now
	return l
}

// Allow reports whether a line may go out now, and if so, how many were
// suppressed since the last one that went out.
func (l *Limiter) Allow() (ok bool, suppressed int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if !l.last.IsZero() && now.Sub(l.last) < l.every {
		l.suppressed++
		return false, 0
	}
	l.last = now
	suppressed, l.suppressed = l.suppressed, 0
	return true, suppressed
}

// Log logs msg at level through logger if the limiter allows it, adding a
// "suppressed" attribute when lines were held back.
func (l *Limiter) Log(logger *slog.Logger, level slog.Level, msg string, args ...any) {
	ok, suppressed := l.Allow()
	if !ok {
		return
	}
	if suppressed > 0 {
		args = append(args, "suppressed", suppressed)
	}
	logger.Log(context.Background(), level, msg, args...)
}
