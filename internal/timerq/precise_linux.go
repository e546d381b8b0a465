package timerq

import (
	"os"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

const preciseSupported = true

// preciseAlarm is a non-blocking timerfd that a goroutine reads through the
// Go runtime's network poller. Its system calls are raw (see settime).
type preciseAlarm struct {
	f    func()
	fd   int      // the timerfd, for timerfd_settime
	file *os.File // fd, registered with the poller
	done chan struct{}

	mu     sync.Mutex
	closed bool
}

func newPreciseAlarm(f func()) Alarm {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_CLOEXEC|unix.TFD_NONBLOCK)
	if err != nil {
		return nil
	}
	// A non-blocking descriptor becomes a pollable file: its reads park
	// the goroutine in the poller, not a thread in the kernel.
	file := os.NewFile(uintptr(fd), "timerfd")
	a := &preciseAlarm{f: f, fd: fd, file: file, done: make(chan struct{})}
	go a.loop()
	return a
}

// loop reads the timerfd: each read returns once the deadline has passed.
//
// The read waits in the poller, not in a blocking system call: a thread
// blocked in one keeps its processor until the runtime's monitor takes it
// back, so the worker the ring wakes would wait for that, and the monitor,
// taking it back over and over, would poll every 20 µs. Through the
// poller, the thread that waits in epoll wakes at the deadline, runs the
// ring and then, on the same thread, the worker the ring made runnable.
func (a *preciseAlarm) loop() {
	defer close(a.done)
	rc, err := a.file.SyscallConn()
	if err != nil {
		return
	}
	var buf [8]byte
	var errno unix.Errno
	read := func(fd uintptr) bool {
		// A raw read: it never blocks, and a plain one would wake the
		// runtime's monitor, as settime says.
		_, _, errno = unix.RawSyscall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
		return errno != unix.EAGAIN // false: wait in the poller, then again
	}
	for {
		if err := rc.Read(read); err != nil || errno != 0 {
			// Closed, or a failure not worth retrying (a disarmed
			// timerfd just does not become readable).
			return
		}
		a.f()
	}
}

// Set arms the timerfd for t, relative to now on CLOCK_MONOTONIC, the
// clock that Go's monotonic readings come from. Relative, the alarm may
// ring late by the time between reading now and arming, never early. An
// absolute deadline would need a pairing of a Go time with a
// CLOCK_MONOTONIC reading, and a process preempted between the two reads
// would ring every alarm early by as long (see Queue.serve for what an
// early ring costs).
func (a *preciseAlarm) Set(t time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.closed {
		// At least 1 ns: a zero value would disarm the timerfd.
		d := max(time.Until(t), 1)
		settime(a.fd, 0, &unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))})
	}
}

// settime is timerfd_settime made as a raw system call: it never blocks,
// and a plain one would wake the runtime's monitor (sysmon), which then
// polls every 20 µs for a while — at 1 kHz, for good.
func settime(fd, flags int, v *unix.ItimerSpec) {
	unix.RawSyscall6(unix.SYS_TIMERFD_SETTIME, uintptr(fd), uintptr(flags), uintptr(unsafe.Pointer(v)), 0, 0, 0)
}

// Stop disarms the timerfd.
func (a *preciseAlarm) Stop() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.closed {
		settime(a.fd, 0, &unix.ItimerSpec{})
	}
}

// Close stops the alarm's goroutine and releases its descriptor; the alarm
// rings no more. It waits for a ring under way to finish, so it must not be
// called from the alarm's function or with a lock that function takes.
func (a *preciseAlarm) Close() error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil
	}
	a.closed = true
	a.mu.Unlock()
	// Closing the file wakes a read that waits, which then fails.
	err := a.file.Close()
	<-a.done
	return err
}
