package ratelog

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// floodEvery is how often a repeated warning or error may be logged.
const floodEvery = time.Second

// floodKeys bounds the number of distinct repeated lines tracked; past it,
// new kinds of lines share one limiter.
const floodKeys = 1024

// floodHandler bounds repeated warnings and errors: of the records at Warn
// or above with the same message, node and callback, one goes through per
// floodEvery, with a "suppressed" attribute counting those held back since
// the last one. It guards the loggers of components whose errors come once
// per message or per failure, and so can flood: the executor's (a
// callback that panics on every message logs its stack each time), the
// broker's and the MQTT client's. Nodes bound their own repeated lines
// (with a Limiter each) and keep their logger.
type floodHandler struct {
	h      slog.Handler
	st     *floodState
	prefix string // node= and callback= of the handler's own attributes
}

type floodState struct {
	mu       sync.Mutex
	limiters map[string]*Limiter
	overflow *Limiter
}

// LimitFloods returns logger with repeated warnings and errors bounded: of
// the records at Warn or above with the same message, node and callback
// attributes, one goes through per second, with a "suppressed" attribute
// counting those held back since the last one. Records below Warn all go
// through. The loggers it returns are safe for concurrent use.
func LimitFloods(logger *slog.Logger) *slog.Logger {
	return slog.New(floodHandler{h: logger.Handler(), st: &floodState{
		limiters: map[string]*Limiter{},
		overflow: New(floodEvery),
	}})
}

func (f floodHandler) Enabled(ctx context.Context, l slog.Level) bool { return f.h.Enabled(ctx, l) }

func (f floodHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < slog.LevelWarn {
		return f.h.Handle(ctx, r)
	}
	var key strings.Builder
	key.WriteString(f.prefix)
	r.Attrs(func(a slog.Attr) bool {
		appendKey(&key, a)
		return true
	})
	key.WriteByte(0)
	key.WriteString(r.Message)
	ok, suppressed := f.st.limiter(key.String()).Allow()
	if !ok {
		return nil
	}
	if suppressed > 0 {
		r = r.Clone()
		r.AddAttrs(slog.Int("suppressed", suppressed))
	}
	return f.h.Handle(ctx, r)
}

// appendKey adds a's value to a record's key if a names its node or its
// callback.
func appendKey(b *strings.Builder, a slog.Attr) {
	if a.Key == "node" || a.Key == "callback" {
		b.WriteString(a.Key)
		b.WriteByte('=')
		b.WriteString(a.Value.String())
		b.WriteByte(0)
	}
}

func (s *floodState) limiter(key string) *Limiter {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.limiters[key]
	if l == nil {
		if len(s.limiters) >= floodKeys {
			return s.overflow
		}
		l = New(floodEvery)
		s.limiters[key] = l
	}
	return l
}

func (f floodHandler) WithAttrs(as []slog.Attr) slog.Handler {
	var b strings.Builder
	b.WriteString(f.prefix)
	for _, a := range as {
		appendKey(&b, a)
	}
	return floodHandler{h: f.h.WithAttrs(as), st: f.st, prefix: b.String()}
}

func (f floodHandler) WithGroup(name string) slog.Handler {
	return floodHandler{h: f.h.WithGroup(name), st: f.st, prefix: f.prefix}
}
