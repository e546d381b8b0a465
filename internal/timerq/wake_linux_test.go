package timerq_test

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/robotexec/robotexec/internal/timerq"
)

// BenchmarkWakeUp measures how late a sleeping thread wakes on this
// machine, which bounds what any timer source can do without spinning:
// each op sleeps until an absolute deadline and reports how late it woke
// (p50_us, p99_us, max_us).
//
//   - "timerfd" is the machine's floor: a thread of its own, blocked in a
//     read of a timerfd armed on the deadline, without the Go runtime.
//   - "alarm" is a Precise alarm without a lead: the ring's lateness, through
//     the Go runtime's network poller, as the precise source wakes.
//
// Sleeps of 100 µs (deadlines close together) and 2 ms (a machine that
// idles between them). Run it with -benchtime 500x or so.
func BenchmarkWakeUp(b *testing.B) {
	for _, sleep := range []time.Duration{100 * time.Microsecond, 2 * time.Millisecond} {
		b.Run(fmt.Sprintf("timerfd/sleep=%v", sleep), func(b *testing.B) { benchmarkTimerfdWake(b, sleep) })
		b.Run(fmt.Sprintf("alarm/sleep=%v", sleep), func(b *testing.B) { benchmarkAlarmWake(b, sleep) })
	}
}

func benchmarkTimerfdWake(b *testing.B, sleep time.Duration) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_CLOEXEC)
	if err != nil {
		b.Fatal(err)
	}
	defer unix.Close(fd)
	monotonic := func() int64 {
		var ts unix.Timespec
		unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
		return ts.Nano()
	}
	var late []time.Duration
	var buf [8]byte
	for b.Loop() {
		deadline := monotonic() + int64(sleep)
		spec := unix.ItimerSpec{Value: unix.NsecToTimespec(deadline)}
		if err := unix.TimerfdSettime(fd, unix.TFD_TIMER_ABSTIME, &spec, nil); err != nil {
			b.Fatal(err)
		}
		// Raw: the thread blocks in the kernel without the runtime's
		// syscall bookkeeping, as a C program's would.
		if _, _, errno := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf))); errno != 0 {
			b.Fatal(errno)
		}
		late = append(late, time.Duration(monotonic()-deadline))
	}
	reportWake(b, late)
}

func benchmarkAlarmWake(b *testing.B, sleep time.Duration) {
	rang := make(chan time.Time, 1)
	a := timerq.Precise{}.NewAlarm(func() { rang <- time.Now() })
	defer a.(io.Closer).Close()
	var late []time.Duration
	for b.Loop() {
		deadline := time.Now().Add(sleep)
		a.Set(deadline)
		late = append(late, (<-rang).Sub(deadline))
	}
	reportWake(b, late)
}

func reportWake(b *testing.B, late []time.Duration) {
	slices.Sort(late)
	at := func(q float64) float64 {
		return float64(late[min(int(q*float64(len(late))), len(late)-1)]) / float64(time.Microsecond)
	}
	b.ReportMetric(at(0.5), "p50_us")
	b.ReportMetric(at(0.99), "p99_us")
	b.ReportMetric(at(1), "max_us")
}
