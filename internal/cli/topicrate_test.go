package cli

// Tests of topic hz and topic bw's figures on synthetic arrival times, and
// of their command lines up to the connection.

import (
	"bytes"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var rateT0 = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

// windowOf returns a window of size max fed messages at the offsets from
// rateT0 (in ms) with the sizes.
func windowOf(t *testing.T, max int, offsetsMs []int, sizes []int) *rateWindow {
	t.Helper()
	require.Len(t, sizes, len(offsetsMs))
	w := newRateWindow(max)
	for i, ms := range offsetsMs {
		w.add(rateT0.Add(time.Duration(ms)*time.Millisecond), sizes[i])
	}
	return w
}

// TestTopicHzGolden: intervals of 5, 15, 5 and 15 ms average 10 ms, 100 Hz,
// with a standard deviation of exactly 5 ms.
func TestTopicHzGolden(t *testing.T) {
	w := windowOf(t, 10, []int{0, 5, 20, 25, 40}, []int{1, 1, 1, 1, 1})
	r, ok := w.hz("x/y")
	require.True(t, ok)
	require.Equal(t, "average rate: 100.000\n\tmin: 0.005s max: 0.015s std dev: 0.00500s window: 5\n", formatReport(r, false))
	require.Equal(t, `{"topic":"x/y","rate_hz":100,"min_s":0.005,"max_s":0.015,"std_dev_s":0.005,"window":5}`+"\n", formatReport(r, true))
}

// TestTopicHzRounding: the text rounds as ros2 does (%.3f, %.5f); JSON
// keeps every digit.
func TestTopicHzRounding(t *testing.T) {
	// Intervals 9, 11, 10 ms: mean 10 ms, std dev sqrt(2/3) ms.
	w := windowOf(t, 10, []int{0, 9, 20, 30}, []int{1, 1, 1, 1})
	r, ok := w.hz("hb")
	require.True(t, ok)
	require.Equal(t, "average rate: 100.000\n\tmin: 0.009s max: 0.011s std dev: 0.00082s window: 4\n", r.String())
	require.Equal(t, `{"topic":"hb","rate_hz":100,"min_s":0.009,"max_s":0.011,"std_dev_s":0.000816496580927726,"window":4}`+"\n", formatReport(r, true))
}

// TestTopicBwGolden: 20+30+40+50 bytes arrive in the 40 ms after the
// first message: 3500 B/s.
func TestTopicBwGolden(t *testing.T) {
	w := windowOf(t, 10, []int{0, 5, 20, 25, 40}, []int{10, 20, 30, 40, 50})
	r, ok := w.bw("x/y")
	require.True(t, ok)
	require.Equal(t, "3.50 KB/s from 5 messages\n\tMessage size mean: 30 B min: 10 B max: 50 B\n", formatReport(r, false))
	require.Equal(t, `{"topic":"x/y","bytes_per_s":3500,"messages":5,"mean_b":30,"min_b":10,"max_b":50}`+"\n", formatReport(r, true))
}

// TestTopicBwSmallAndLarge: bytes per second below 1000 print in B, a
// fractional mean with its decimals; megabytes in MB.
func TestTopicBwSmallAndLarge(t *testing.T) {
	w := windowOf(t, 10, []int{0, 1000, 2000}, []int{3, 4, 4})
	r, ok := w.bw("s")
	require.True(t, ok)
	require.Equal(t, "4 B/s from 3 messages\n\tMessage size mean: 3.67 B min: 3 B max: 4 B\n", r.String())

	w = windowOf(t, 10, []int{0, 100, 200}, []int{1_500_000, 1_500_000, 1_500_000})
	r, ok = w.bw("l")
	require.True(t, ok)
	require.Equal(t, "15.00 MB/s from 3 messages\n\tMessage size mean: 1.50 MB min: 1.50 MB max: 1.50 MB\n", r.String())
}

func TestTopicRateByteUnits(t *testing.T) {
	for n, want := range map[float64]string{
		0: "0 B", 12: "12 B", 12.5: "12.5 B", 999.99: "999.99 B", 1000: "1.00 KB",
		1234.5: "1.23 KB", 999_990: "999.99 KB", 1e6: "1.00 MB", 2.5e9: "2500.00 MB",
	} {
		require.Equal(t, want, byteUnits(n), "%v bytes", n)
	}
}

// TestTopicRateTooFew: no report before two messages, nor when they span no
// time; a report as soon as two messages span some.
func TestTopicRateTooFew(t *testing.T) {
	w := newRateWindow(10)
	for _, n := range []int{0, 1} {
		_, ok := w.hz("t")
		require.False(t, ok, "hz with %d messages", n)
		_, ok = w.bw("t")
		require.False(t, ok, "bw with %d messages", n)
		w.add(rateT0, 7)
	}
	_, ok := w.hz("t")
	require.False(t, ok, "two messages at the same time")
	w = windowOf(t, 10, []int{0, 250}, []int{7, 9})
	h, ok := w.hz("t")
	require.True(t, ok)
	require.Equal(t, hzReport{Topic: "t", RateHz: 4, MinS: 0.25, MaxS: 0.25, Window: 2}, h)
	b, ok := w.bw("t")
	require.True(t, ok)
	require.Equal(t, bwReport{Topic: "t", BytesPerS: 36, Messages: 2, MeanB: 8, MinB: 7, MaxB: 9}, b)
}

// TestTopicRateEviction: a window of 3 reports on the last 3 messages only.
func TestTopicRateEviction(t *testing.T) {
	// Two slow, large messages, then three fast, small ones.
	w := windowOf(t, 3, []int{0, 100, 200, 210, 220}, []int{1000, 1000, 5, 5, 5})
	require.Equal(t, 3, w.len())
	require.Equal(t, uint64(5), w.seen)
	h, ok := w.hz("t")
	require.True(t, ok)
	require.Equal(t, hzReport{Topic: "t", RateHz: 100, MinS: 0.01, MaxS: 0.01, Window: 3}, h)
	b, ok := w.bw("t")
	require.True(t, ok)
	require.Equal(t, bwReport{Topic: "t", BytesPerS: 500, Messages: 3, MeanB: 5, MinB: 5, MaxB: 5}, b)
}

// TestTopicRateRingOrder: across many wraps, the window holds the last
// messages, oldest first.
func TestTopicRateRingOrder(t *testing.T) {
	for _, size := range []int{2, 3, 7} {
		w := newRateWindow(size)
		for i := range 50 {
			w.add(rateT0.Add(time.Duration(i)*time.Second), i)
			n := min(i+1, size)
			require.Equal(t, n, w.len())
			for j := range n {
				want := i - n + 1 + j
				require.Equal(t, rateSample{rateT0.Add(time.Duration(want) * time.Second), want}, w.sample(j), "window %d after %d adds, sample %d", size, i+1, j)
			}
		}
	}
}

// TestTopicHzStdDev: the standard deviation is the population's, over the
// intervals (divided by their number, as ros2 does), not the sample's.
func TestTopicHzStdDev(t *testing.T) {
	intervals := []float64{0.010, 0.012, 0.007, 0.031, 0.010, 0.009, 0.0105}
	at, offsets := 0, []int{0}
	for _, d := range intervals {
		at += int(math.Round(d * 1e6)) // µs
		offsets = append(offsets, at)
	}
	w := newRateWindow(100)
	for _, us := range offsets {
		w.add(rateT0.Add(time.Duration(us)*time.Microsecond), 1)
	}
	mean := 0.0
	for _, d := range intervals {
		mean += d
	}
	mean /= float64(len(intervals))
	sq := 0.0
	for _, d := range intervals {
		sq += (d - mean) * (d - mean)
	}
	population := math.Sqrt(sq / float64(len(intervals)))
	sample := math.Sqrt(sq / float64(len(intervals)-1))
	r, ok := w.hz("t")
	require.True(t, ok)
	require.InDelta(t, population, r.StdDevS, 1e-12)
	require.Greater(t, math.Abs(sample-r.StdDevS), 1e-4, "not the sample's")
	require.InDelta(t, 1/mean, r.RateHz, 1e-9)
	require.Equal(t, 0.007, r.MinS)
	require.Equal(t, 0.031, r.MaxS)
}

// TestTopicRateUsage: bad command lines exit 2 before connecting; -h
// prints the usage on stdout and exits 0.
func TestTopicRateUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{nil, "want one TOPIC"},
		{[]string{"a", "b"}, "want one TOPIC"},
		{[]string{"-window", "1", "a"}, "-window 1: want 2 or more"},
		{[]string{"-n", "-1", "a"}, "-n -1: want 0 or more"},
		{[]string{"-timeout", "0s", "a"}, "-timeout 0s: want more than 0"},
		{[]string{"a/#/b"}, `topic filter "a/#/b"`},
		{[]string{"-bogus", "a"}, "flag provided but not defined: -bogus"},
	} {
		for name, cmd := range map[string]func([]string, io.Writer, io.Writer) int{"hz": cmdTopicHz, "bw": cmdTopicBw} {
			var stdout, stderr bytes.Buffer
			require.Equal(t, ExitUsage, cmd(c.args, &stdout, &stderr), "topic %s %q", name, c.args)
			require.Contains(t, stderr.String(), c.msg, "topic %s %q", name, c.args)
			require.Empty(t, stdout.String())
		}
	}
	var stdout, stderr bytes.Buffer
	require.Equal(t, ExitOK, cmdTopicBw([]string{"-h"}, &stdout, &stderr))
	require.True(t, strings.HasPrefix(stdout.String(), "Usage: robotexec topic bw [flags] TOPIC\n"), stdout.String())
	require.Contains(t, stdout.String(), "-window int")
	require.Empty(t, stderr.String())
}
