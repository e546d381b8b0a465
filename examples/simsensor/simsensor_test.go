package simsensor_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/examples/simsensor"
	"github.com/robotexec/robotexec/nodes/nodetest"
)

// epoch is where a rig's clock starts (see nodetest.New).
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// tick advances the clock by d, n times, running what falls due.
func tick(r *nodetest.Rig, d time.Duration, n int) {
	for range n {
		r.Advance(d)
	}
}

func stamp(d time.Duration) string { return epoch.Add(d).Format(time.RFC3339Nano) }

// Without noise the IMU reads exactly gravity, the centripetal
// acceleration and the yaw rate, stamped with each tick's deadline.
func TestIMUWithoutNoise(t *testing.T) {
	r := nodetest.New(t)
	r.MustBuild("imu0", "sim_imu", "{ topic: imu/raw, rate: 50, speed: 2, turn: 0.5, noise: 0 }")
	tick(r, 20*time.Millisecond, 3)
	require.Equal(t, []simsensor.IMUSample{
		{Stamp: stamp(20 * time.Millisecond), AY: 1, AZ: 9.81, GZ: 0.5},
		{Stamp: stamp(40 * time.Millisecond), AY: 1, AZ: 9.81, GZ: 0.5},
		{Stamp: stamp(60 * time.Millisecond), AY: 1, AZ: 9.81, GZ: 0.5},
	}, nodetest.PublishedJSON[simsensor.IMUSample](r, "imu/raw"))
}

// With the defaults (100 Hz, 0.5 m/s, 0.2 rad/s, noise 0.02) the samples
// scatter around the same values, with the noise's spread, and the
// sequence depends only on the node's name.
func TestIMUNoiseAndDefaults(t *testing.T) {
	r := nodetest.New(t)
	r.MustBuild("imu0", "sim_imu", "{ topic: a }")
	r.MustBuild("imu1", "sim_imu", "{ topic: b }")
	tick(r, 10*time.Millisecond, 400)
	a := nodetest.PublishedJSON[simsensor.IMUSample](r, "a")
	b := nodetest.PublishedJSON[simsensor.IMUSample](r, "b")
	require.Len(t, a, 400)
	require.Equal(t, a, b, "names of one length seed the same noise")

	var az []float64
	for _, s := range a {
		az = append(az, s.AZ)
	}
	mean, std := meanStd(az)
	require.InDelta(t, 9.81, mean, 0.01)
	require.InDelta(t, 0.02, std, 0.005)
	require.NotEqual(t, a[0].AZ, a[1].AZ)
}

func meanStd(xs []float64) (mean, std float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		std += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(std / float64(len(xs)))
}

// Without noise the odometry integrates the wheel speeds: each tick turns
// by turn·dt and moves speed·dt along the new heading.
func TestOdomIntegratesThePose(t *testing.T) {
	r := nodetest.New(t)
	r.MustBuild("odom", "sim_odom", "{ topic: odom, rate: 10, speed: 1, turn: 0.5, noise: 0 }")
	tick(r, 100*time.Millisecond, 2)
	got := nodetest.PublishedJSON[simsensor.Odometry](r, "odom")
	require.Len(t, got, 2)
	p := got[1]
	require.Equal(t, stamp(200*time.Millisecond), p.Stamp)
	require.InDelta(t, 0.1, p.Theta, 1e-12)
	require.InDelta(t, 0.1*math.Cos(0.05)+0.1*math.Cos(0.1), p.X, 1e-12)
	require.InDelta(t, 0.1*math.Sin(0.05)+0.1*math.Sin(0.1), p.Y, 1e-12)
	require.Equal(t, 1.0, p.V)
	require.Equal(t, 0.5, p.W)
}

// Ticks missed while the timer was late are integrated too: the pose
// does not fall behind the clock.
func TestOdomCatchesUpMissedTicks(t *testing.T) {
	r := nodetest.New(t)
	r.MustBuild("odom", "sim_odom", "{ topic: odom, rate: 10, speed: 1, turn: 0.5, noise: 0 }")
	r.Advance(350 * time.Millisecond) // the deadlines of 100, 200 and 300 ms pass
	got := nodetest.PublishedJSON[simsensor.Odometry](r, "odom")
	require.Len(t, got, 1, "one call for three deadlines")
	require.Equal(t, stamp(100*time.Millisecond), got[0].Stamp)
	require.InDelta(t, 0.15, got[0].Theta, 1e-12)
	require.InDelta(t, 0.3*math.Cos(0.15), got[0].X, 1e-12)
}

// The heading stays within [-π, π].
func TestOdomWrapsTheHeading(t *testing.T) {
	r := nodetest.New(t)
	r.MustBuild("odom", "sim_odom", "{ topic: odom, rate: 10, turn: 10, noise: 0 }")
	tick(r, 100*time.Millisecond, 4)
	got := nodetest.PublishedJSON[simsensor.Odometry](r, "odom")
	require.InDelta(t, 3, got[2].Theta, 1e-12)
	require.InDelta(t, 4-2*math.Pi, got[3].Theta, 1e-12)
}

func TestSensorsRejectBadParams(t *testing.T) {
	for _, typ := range []string{"sim_imu", "sim_odom"} {
		for _, tc := range []struct{ params, want string }{
			{"{ rate: 10 }", "topic is required"},
			{"{ topic: x, rate: 0 }", "rate 0 must be above 0 and at most 10000"},
			{"{ topic: x, rate: -5 }", "rate -5 must be above 0"},
			{"{ topic: x, rate: 10001 }", "rate 10001 must be above 0 and at most 10000"},
			{"{ topic: x, hz: 10 }", "hz: unknown key"},
			{"{ topic: x, speed: fast }", `"fast"`},
		} {
			t.Run(typ+" "+tc.params, func(t *testing.T) {
				_, err := nodetest.New(t).Build("s", typ, tc.params)
				require.ErrorContains(t, err, tc.want)
				require.ErrorContains(t, err, "node s ("+typ+")")
			})
		}
	}
}
