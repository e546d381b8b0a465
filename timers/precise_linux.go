package timers

import (
	"errors"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

const preciseSupported = true

// preciseAlarm is a timerfd read by a goroutine locked to its OS thread.
type preciseAlarm struct {
	f    func()
	fd   int
	done chan struct{}

	mu     sync.Mutex
	closed bool
}

func newPreciseAlarm(f func()) Alarm {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_CLOEXEC)
	if err != nil {
		return nil
	}
	a := &preciseAlarm{f: f, fd: fd, done: make(chan struct{})}
	go a.loop()
	return a
}

func (a *preciseAlarm) loop() {
	// The goroutine keeps its thread to the end: the thread exits with it.
	runtime.LockOSThread()
	// The kernel may delay a thread's timers by its timer slack (50 µs by
	// default) to batch wake-ups; this thread wants its deadlines.
	unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	defer close(a.done)
	var buf [8]byte
	for {
		_, err := unix.Read(a.fd, buf[:])
		a.mu.Lock()
		closed := a.closed
		a.mu.Unlock()
		if closed {
			return
		}
		if err != nil {
			if errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN) {
				continue
			}
			return
		}
		a.f()
	}
}

// Set arms the timerfd for t, on an absolute CLOCK_MONOTONIC deadline.
func (a *preciseAlarm) Set(t time.Time) {
	d := time.Until(t)
	if d < time.Nanosecond {
		d = time.Nanosecond // zero would disarm it
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return
	}
	var now unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &now); err != nil {
		return
	}
	abs := unix.NsecToTimespec(now.Nano() + int64(d))
	unix.TimerfdSettime(a.fd, unix.TFD_TIMER_ABSTIME, &unix.ItimerSpec{Value: abs}, nil)
}

// Stop disarms the timerfd.
func (a *preciseAlarm) Stop() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.closed {
		unix.TimerfdSettime(a.fd, 0, &unix.ItimerSpec{}, nil)
	}
}

// Close stops the alarm's thread and releases its descriptor; the alarm
// rings no more. It waits for a ring under way to finish, so it must not be
// called from the alarm's function or with a lock that function takes.
func (a *preciseAlarm) Close() error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil
	}
	a.closed = true
	// Wake the reader now, so that it sees closed and exits.
	unix.TimerfdSettime(a.fd, 0, &unix.ItimerSpec{Value: unix.NsecToTimespec(1)}, nil)
	a.mu.Unlock()
	<-a.done
	return unix.Close(a.fd)
}
