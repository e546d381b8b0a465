package imufilter_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/config"
	"github.com/robotexec/robotexec/examples/imufilter"
	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/nodes"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// rig runs nodes through the node API on a simulated clock and the
// in-process router, spun by hand, as package nodes' tests do.
type rig struct {
	t     *testing.T
	clock *timers.Sim
	ex    *executor.Executor
	bus   *subscribers.Router
	env   *nodes.Env
	logs  *lockedBuffer
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newRig(t *testing.T) *rig {
	r := &rig{t: t, clock: timers.NewSim(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), bus: new(subscribers.Router), logs: &lockedBuffer{}}
	logger := slog.New(slog.NewTextHandler(r.logs, nil))
	r.ex = executor.New(executor.Options{Workers: 1, Clock: r.clock, Logger: logger})
	r.env = &nodes.Env{Executor: r.ex, Router: r.bus, Logger: logger, QoS: 1, Depth: 100}
	return r
}

// build builds a node of type typ with params in YAML flow style.
func (r *rig) build(typ, params string) (*nodes.Node, error) {
	cfg, err := config.Parse("test.yaml", []byte("nodes:\n  - { name: n, type: t, params: "+params+" }\n"), nil)
	require.NoError(r.t, err)
	return nodes.Build(r.env, nodes.Spec{Name: "filter", Type: typ, Params: cfg.Nodes[0].Params})
}

// filtered collects what the filter publishes on imu/filtered.
func (r *rig) filtered() func() []imufilter.Filtered {
	var got []imufilter.Filtered
	_, err := r.ex.NewOwner("collector", nil).Subscribe(r.bus, "imu/filtered", func(m subscribers.Message) {
		var f imufilter.Filtered
		require.NoError(r.t, json.Unmarshal(m.Payload, &f))
		got = append(got, f)
	}, executor.Depth(100))
	require.NoError(r.t, err)
	return func() []imufilter.Filtered { return got }
}

func (r *rig) feed(payloads ...string) {
	p, err := r.bus.Publisher("imu/raw")
	require.NoError(r.t, err)
	for _, payload := range payloads {
		require.NoError(r.t, p.Publish([]byte(payload)))
	}
	r.ex.SpinAll()
}

func (r *rig) advance(d time.Duration) {
	r.clock.Advance(d)
	r.ex.SpinAll()
}

// The first sample is the average; each next one is blended in with
// weight alpha, on every axis; the average is published once a period,
// and not before the first sample.
func TestFilterBlendsAndPublishesEachPeriod(t *testing.T) {
	r := newRig(t)
	_, err := r.build("imu_filter", "{ input: imu/raw, output: imu/filtered, alpha: 0.25, period: 100ms, log: 0s }")
	require.NoError(t, err)
	got := r.filtered()

	r.advance(100 * time.Millisecond)
	require.Empty(t, got(), "nothing to publish before the first sample")

	r.feed(`{"ax":8,"ay":-4,"az":10,"gx":1,"gy":2,"gz":4}`)
	r.advance(100 * time.Millisecond)
	require.Equal(t, []imufilter.Filtered{{Sample: imufilter.Sample{AX: 8, AY: -4, AZ: 10, GX: 1, GY: 2, GZ: 4}, Samples: 1}}, got())

	r.feed(`{"ax":0,"ay":4,"az":6,"gx":1,"gy":-2,"gz":0}`, `{"ax":0}`)
	r.advance(100 * time.Millisecond)
	require.Len(t, got(), 2)
	// 8 → 6 → 4.5; -4 → -2 → -1.5; 10 → 9 → 6.75; 1 → 1 → 0.75;
	// 2 → 1 → 0.75; 4 → 3 → 2.25.
	require.Equal(t, imufilter.Filtered{Sample: imufilter.Sample{AX: 4.5, AY: -1.5, AZ: 6.75, GX: 0.75, GY: 0.75, GZ: 2.25}, Samples: 3}, got()[1])

	r.advance(100 * time.Millisecond)
	require.Len(t, got(), 3, "the average is published every period, new samples or not")
	require.Equal(t, got()[1], got()[2])
}

// By default alpha is 0.2, the period 50 ms, and the average is logged
// once a second, rounded to the millimetre.
func TestFilterDefaultsAndLog(t *testing.T) {
	r := newRig(t)
	_, err := r.build("imu_filter", "{ input: imu/raw, output: imu/filtered }")
	require.NoError(t, err)
	got := r.filtered()
	r.feed(`{"ax":0,"az":9.81,"gz":0.2}`, `{"ax":1,"az":9.81,"gz":0.2}`)
	r.advance(50 * time.Millisecond)
	require.Len(t, got(), 1)
	require.InDelta(t, 0.2, got()[0].AX, 1e-12)
	require.NotContains(t, r.logs.String(), "filtered imu")

	for range 19 {
		r.advance(50 * time.Millisecond)
	}
	require.Len(t, got(), 20)
	logs := r.logs.String()
	require.Equal(t, 1, strings.Count(logs, "filtered imu"), logs)
	require.Contains(t, logs, "node=filter ax=0.2 ay=0 az=9.81 gz=0.2 samples=2")
}

func TestFilterRejectsBadParams(t *testing.T) {
	for _, tc := range []struct{ params, want string }{
		{"{ input: imu/raw, output: imu/filtered, alpha: high }", `"high"`},
		{"{ input: imu/raw, output: imu/filtered, period: soon }", `"soon" is not a duration`},
		{"{ input: imu/raw, output: imu/filtered, gain: 2 }", "gain: unknown key"},
	} {
		t.Run(tc.params, func(t *testing.T) {
			_, err := newRig(t).build("imu_filter", tc.params)
			require.ErrorContains(t, err, tc.want)
			require.ErrorContains(t, err, "node filter (imu_filter)")
		})
	}
}

func TestFilterIsRegistered(t *testing.T) {
	info, ok := nodes.Lookup("imu_filter")
	require.True(t, ok)
	require.Equal(t, "low-pass filter for IMU samples", info.Description)
	require.Equal(t, fmt.Sprintf("%p", imufilter.New), fmt.Sprintf("%p", info.New))
}
