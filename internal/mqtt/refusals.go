package mqtt

import (
	"errors"
	"log/slog"
	"sync"
	"time"
)

// refusals counts the broker's refusals by reason and logs them: once
// per topic and reason a minute, with how many were not logged since.
type refusals struct {
	mu   sync.Mutex
	n    map[Reason]uint64
	last map[refusalKey]*refusalLog
}

type refusalKey struct {
	op, topic string
	reason    Reason
}

type refusalLog struct {
	at         time.Time
	suppressed int
}

const (
	// refusalLogEvery spaces out the logs of one topic's refusals.
	refusalLogEvery = time.Minute
	// refusalKeys bounds the topics remembered; past it the oldest go.
	refusalKeys = 1024
)

func (r *refusals) init() {
	r.n = make(map[Reason]uint64)
	r.last = make(map[refusalKey]*refusalLog)
}

// add counts err, if it is a refusal, and logs it as the type comment
// says; it reports whether err was one.
func (r *refusals) add(log *slog.Logger, err error) bool {
	var e *RefusedError
	if !errors.As(err, &e) {
		return false
	}
	now := time.Now()
	k := refusalKey{op: e.Op, topic: e.Topic, reason: e.Reason}
	r.mu.Lock()
	r.n[e.Reason]++
	l := r.last[k]
	logIt := l == nil || now.Sub(l.at) >= refusalLogEvery
	suppressed := 0
	switch {
	case l == nil:
		r.forgetOld(now)
		r.last[k] = &refusalLog{at: now}
	case logIt:
		suppressed, l.at, l.suppressed = l.suppressed, now, 0
	default:
		l.suppressed++
	}
	r.mu.Unlock()
	if logIt {
		args := []any{"topic", e.Topic, "reason", e.Reason.String(), "code", byte(e.Reason)}
		if e.Detail != "" {
			args = append(args, "detail", e.Detail)
		}
		if suppressed > 0 {
			args = append(args, "suppressed", suppressed)
		}
		log.Warn("mqtt: the broker refused to "+e.Op, args...)
	}
	return true
}

// forgetOld makes room for a new topic: the entries older than a minute
// go, and the oldest if that is not enough. r.mu is held.
func (r *refusals) forgetOld(now time.Time) {
	if len(r.last) < refusalKeys {
		return
	}
	var oldest refusalKey
	var at time.Time
	for k, l := range r.last {
		if now.Sub(l.at) >= refusalLogEvery {
			delete(r.last, k)
			continue
		}
		if at.IsZero() || l.at.Before(at) {
			oldest, at = k, l.at
		}
	}
	if len(r.last) >= refusalKeys {
		delete(r.last, oldest)
	}
}

// counts returns the refusals by reason.
func (r *refusals) counts() map[Reason]uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[Reason]uint64, len(r.n))
	for k, v := range r.n {
		out[k] = v
	}
	return out
}
