package timerq

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/waitset"
)

// fallbackLeadSim is a simulated clock with a lead, as Precise has one.
type fallbackLeadSim struct{ *Sim }

const fallbackTestLead = 100 * time.Microsecond

func (fallbackLeadSim) Lead() time.Duration { return fallbackTestLead }

// A run of deadlines a lead apart, each armed once a Poll served the one
// before (armFallback): the alarm is set for the first, then kept while
// its setting lies one to fallbackLeads leads after the deadline armed,
// so that one deadline in fallbackLeads costs a setting; the setting
// never lies less than a lead after the deadline armed. A setting that
// has passed, or a stop, is not kept.
func TestFallbackKeptOverARunOfDeadlines(t *testing.T) {
	start := time.Unix(0, 0)
	q := NewQueue(fallbackLeadSim{NewSim(start)}, waitset.New(nil, nil))
	defer q.Stop()
	q.mu.Lock()
	defer q.mu.Unlock()
	settings := 0
	for k := range 4 * fallbackLeads {
		d := start.Add(time.Millisecond + time.Duration(k)*fallbackTestLead)
		gen := q.alarmState.gen.Load()
		q.armFallback(d)
		if q.alarmState.gen.Load() != gen {
			settings++
		}
		at := q.alarmState.want.at
		require.Equal(t, d, q.armedAt, "deadline %d armed", k)
		require.False(t, at.Before(d.Add(fallbackTestLead)), "deadline %d: the fallback a lead or more after it", k)
		require.False(t, at.After(d.Add(fallbackLeads*fallbackTestLead)), "deadline %d: at most fallbackLeads leads after it", k)
	}
	require.Equal(t, 4, settings, "one setting per fallbackLeads deadlines")

	d := q.armedAt.Add(fallbackTestLead)
	q.want(alarmWant{stop: true})
	gen := q.alarmState.gen.Load()
	q.armFallback(d)
	require.Equal(t, gen+1, q.alarmState.gen.Load(), "a stopped alarm is set")
	require.Equal(t, d.Add(fallbackLeads*fallbackTestLead), q.alarmState.want.at)
}
