package imufilter_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/examples/imufilter"
	"github.com/robotexec/robotexec/nodes"
	"github.com/robotexec/robotexec/nodes/nodetest"
)

// filtered returns what the filter published so far.
func filtered(r *nodetest.Rig) []imufilter.Filtered {
	return nodetest.PublishedJSON[imufilter.Filtered](r, "imu/filtered")
}

// The first sample is the average; each next one is blended in with
// weight alpha, on every axis; the average is published once a period,
// and not before the first sample.
func TestFilterBlendsAndPublishesEachPeriod(t *testing.T) {
	r := nodetest.New(t)
	r.MustBuild("filter", "imu_filter", "{ input: imu/raw, output: imu/filtered, alpha: 0.25, period: 100ms, log: 0s }")

	r.Advance(100 * time.Millisecond)
	require.Empty(t, filtered(r), "nothing to publish before the first sample")

	r.Publish("imu/raw", `{"ax":8,"ay":-4,"az":10,"gx":1,"gy":2,"gz":4}`)
	r.Advance(100 * time.Millisecond)
	require.Equal(t, []imufilter.Filtered{{Sample: imufilter.Sample{AX: 8, AY: -4, AZ: 10, GX: 1, GY: 2, GZ: 4}, Samples: 1}}, filtered(r))

	r.Publish("imu/raw", `{"ax":0,"ay":4,"az":6,"gx":1,"gy":-2,"gz":0}`, `{"ax":0}`)
	r.Advance(100 * time.Millisecond)
	require.Len(t, filtered(r), 2)
	// 8 → 6 → 4.5; -4 → -2 → -1.5; 10 → 9 → 6.75; 1 → 1 → 0.75;
	// 2 → 1 → 0.75; 4 → 3 → 2.25.
	require.Equal(t, imufilter.Filtered{Sample: imufilter.Sample{AX: 4.5, AY: -1.5, AZ: 6.75, GX: 0.75, GY: 0.75, GZ: 2.25}, Samples: 3}, filtered(r)[1])

	r.Advance(100 * time.Millisecond)
	require.Len(t, filtered(r), 3, "the average is published every period, new samples or not")
	require.Equal(t, filtered(r)[1], filtered(r)[2])
}

// By default alpha is 0.2, the period 50 ms, and the average is logged
// once a second, rounded to the millimetre.
func TestFilterDefaultsAndLog(t *testing.T) {
	r := nodetest.New(t)
	r.MustBuild("filter", "imu_filter", "{ input: imu/raw, output: imu/filtered }")
	r.Publish("imu/raw", `{"ax":0,"az":9.81,"gz":0.2}`, `{"ax":1,"az":9.81,"gz":0.2}`)
	r.Advance(50 * time.Millisecond)
	require.Len(t, filtered(r), 1)
	require.InDelta(t, 0.2, filtered(r)[0].AX, 1e-12)
	require.NotContains(t, r.Logs(), "filtered imu")

	for range 19 {
		r.Advance(50 * time.Millisecond)
	}
	require.Len(t, filtered(r), 20)
	logs := r.Logs()
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
			_, err := nodetest.New(t).Build("filter", "imu_filter", tc.params)
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
