package tsc

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestTryNsPerTick: where the counter is trusted, the first call does not
// wait for the calibration, which it begins with a reading; a call 10 ms
// later ends it with NsPerTick's value, and no goroutine is left behind.
// It runs first (tests run in source order), before anything calibrated,
// except when the test binary runs it again (-count).
func TestTryNsPerTick(t *testing.T) {
	goroutines := runtime.NumGoroutine()
	before := done.Load()
	_, ok := TryNsPerTick()
	if !trust() {
		require.True(t, ok, "an untrusted counter is known at once")
		return
	}
	require.Equal(t, before, ok, "calibrated only after a calibration")
	if !before {
		require.NotNil(t, first.Load(), "the first reading is taken")
		_, ok = TryNsPerTick()
		require.False(t, ok, "not calibrated within the window")
	}
	// At most as many: one of the test binary's own may end meanwhile.
	require.LessOrEqual(t, runtime.NumGoroutine(), goroutines, "no goroutine calibrates")
	time.Sleep(calibrateWindow)
	f, ok := TryNsPerTick()
	require.True(t, ok, "calibrated %v after the first reading", calibrateWindow)
	require.Equal(t, NsPerTick(), f)
	require.NotZero(t, f)
}

// TestCalibration checks the counter against the monotonic clock where it
// is trusted, and that it is not used where it is not.
func TestCalibration(t *testing.T) {
	f := NsPerTick()
	if !trusted() {
		require.Zero(t, f)
		return
	}
	require.NotZero(t, f)
	// Each reading of the clock is taken between two of the counter, and
	// again if the goroutine was held up meanwhile (a loaded machine).
	pair := func() (time.Time, int64) {
		for {
			c0 := Read()
			now := time.Now()
			c1 := Read()
			if float64(c1-c0)*f < float64(20*time.Microsecond) {
				return now, c0 + (c1-c0)/2
			}
		}
	}
	t0, c0 := pair()
	time.Sleep(20 * time.Millisecond)
	t1, c1 := pair()
	require.Greater(t, c1, c0)
	require.InEpsilon(t, float64(t1.Sub(t0)), float64(c1-c0)*f, 0.01, "20 ms on the counter")
}

// TestUntrustedByEnvironment: ROBOTEXEC_TSC=off makes the counter
// untrusted wherever the kernel keeps time with it.
func TestUntrustedByEnvironment(t *testing.T) {
	t.Setenv("ROBOTEXEC_TSC", "off")
	require.False(t, trusted())
}

// TestLocalCalibration checks two ReadOn readings on one CPU against the
// monotonic clock where LocalNsPerTick is not 0 (ROBOTEXEC_TSC=off covers
// the local calibration where the kernel trusts the counter).
func TestLocalCalibration(t *testing.T) {
	f := LocalNsPerTick()
	if ns := NsPerTick(); ns != 0 {
		require.Equal(t, ns, f, "the trusted period where there is one")
	}
	if f == 0 {
		require.False(t, local())
		return
	}
	// Readings around the clock's on one CPU; a loaded machine may
	// move the thread or hold it up, and then they are taken again.
	pair := func() (time.Time, int64, uint32) {
		for {
			c0, cpu0 := ReadOn()
			now := time.Now()
			c1, cpu1 := ReadOn()
			if cpu0 == cpu1 && cpu0 != NoCPU && float64(c1-c0)*f < float64(20*time.Microsecond) {
				return now, c0 + (c1-c0)/2, cpu0
			}
		}
	}
	for {
		t0, c0, cpu0 := pair()
		time.Sleep(20 * time.Millisecond)
		t1, c1, cpu1 := pair()
		if cpu1 != cpu0 {
			continue
		}
		require.Greater(t, c1, c0)
		require.InEpsilon(t, float64(t1.Sub(t0)), float64(c1-c0)*f, 0.01, "20 ms on the counter")
		return
	}
}

// TestCalibrate: a calibration from a reading of its own, or from one
// taken earlier, finds the counter's period: NsPerTick's within 1% where
// the kernel trusts the counter, else the one measured on one CPU within
// 5%. Where
// neither is known, it is a counter's period (100 MHz to 100 GHz) or 0.
func TestCalibrate(t *testing.T) {
	want, tolerance := NsPerTick(), 0.01
	if want == 0 {
		// Across CPUs whose counters the kernel does not vouch for: an
		// offset between two CPUs' counters adds to the error.
		want, tolerance = LocalNsPerTick(), 0.05
	}
	if want == 0 {
		f := calibrate(nil)
		require.True(t, f == 0 || (f > 0.01 && f < 10), "%v ns per tick", f)
		return
	}
	require.InEpsilon(t, want, calibrate(nil), tolerance)
	t0, c0 := pair()
	require.InEpsilon(t, want, calibrate(&reading{t0, c0}), tolerance)
}

// TestCalibrateLocal: the calibration on one CPU gives the rate the
// trusted calibration finds (within 1%) where the counter is constant-rate
// and the CPU has rdpid, and 0 elsewhere. It runs whether or not the
// kernel trusts the counter, which decides only which of the two
// LocalNsPerTick returns.
func TestCalibrateLocal(t *testing.T) {
	// A calibration gives 0 when the thread kept moving to another CPU
	// during its windows (a loaded machine): it is tried again, a bounded
	// number of times, on a thread of its own.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var f float64
	for i := 0; i < 20 && f == 0; i++ {
		f = calibrateLocal()
	}
	if !local() {
		require.Zero(t, f)
		return
	}
	require.NotZero(t, f, "a constant-rate counter with rdpid")
	if g := NsPerTick(); g != 0 {
		require.InEpsilon(t, g, f, 0.01)
		require.Equal(t, g, LocalNsPerTick(), "the trusted period where there is one")
	}
}
