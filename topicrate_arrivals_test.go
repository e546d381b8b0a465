package robotexec_test

// The stream that topic hz and topic bw watch, as the test's own
// subscriber sees it: on a loaded machine a heartbeat skips deadlines and
// a broker delivers in bursts, so the rate they must report is the rate
// the stream had, not the nominal one.

import (
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/stretchr/testify/require"
)

// arrivals records when each message matching a filter reached the test.
type arrivals struct {
	filter string
	mu     sync.Mutex
	at     []time.Time
}

// watchArrivals subscribes to filter on url and records arrivals until the
// test ends. It returns once the subscription is acknowledged, so that a
// command started after it sees no message the recorder missed.
func watchArrivals(t *testing.T, url, filter string) *arrivals {
	t.Helper()
	a := &arrivals{filter: filter}
	c := connectClient(t, url, strings.NewReplacer("/", "-", "+", "any").Replace("arrivals-"+filter+"-"+t.Name()))
	tok := c.Subscribe(filter, 0, func(paho.Client, paho.Message) {
		now := time.Now()
		a.mu.Lock()
		a.at = append(a.at, now)
		a.mu.Unlock()
	})
	require.True(t, tok.WaitTimeout(traffic) && tok.Error() == nil, "subscribe %s: %v", filter, tok.Error())
	return a
}

// rateRange returns the lowest and the highest rate (one over the mean
// interval) of any n consecutive arrivals recorded so far.
func (a *arrivals) rateRange(t *testing.T, n int) (lo, hi float64) {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	require.GreaterOrEqual(t, n, 2)
	require.GreaterOrEqual(t, len(a.at), n, "%s: %d arrivals, fewer than a window of %d", a.filter, len(a.at), n)
	lo, hi = math.Inf(1), 0
	for i := 0; i+n <= len(a.at); i++ {
		span := a.at[i+n-1].Sub(a.at[i]).Seconds()
		if span <= 0 {
			continue
		}
		r := float64(n-1) / span
		lo, hi = min(lo, r), max(hi, r)
	}
	return lo, hi
}

// requireRate checks that rate, reported over a window of n messages, is
// within 10% of the rate some n consecutive arrivals had. Both
// subscribers see the same skipped deadlines; a window or a scale
// computed wrong is off by more.
func (a *arrivals) requireRate(t *testing.T, rate float64, n int, report any) {
	t.Helper()
	lo, hi := a.rateRange(t, n)
	require.True(t, rate >= 0.9*lo && rate <= 1.1*hi,
		"%s: reported %.2f Hz over %d messages; windows of the stream had %.2f–%.2f Hz: %+v", a.filter, rate, n, lo, hi, report)
}
