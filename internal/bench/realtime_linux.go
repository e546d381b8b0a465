package bench

import (
	"fmt"
	"runtime"
	"syscall"
	"unsafe"
)

// realtimePermitted reports whether this process may run a thread in the
// SCHED_FIFO class, as executor.realtime does: it tries on a thread of
// its own, which ends with its goroutine.
func realtimePermitted() error {
	errs := make(chan error)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		param := struct{ priority int32 }{1}
		_, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_SETSCHEDULER, uintptr(syscall.Gettid()), 1, uintptr(unsafe.Pointer(&param)))
		if errno != 0 {
			errs <- fmt.Errorf("SCHED_FIFO: %w", errno)
			return
		}
		errs <- nil
	}()
	return <-errs
}
