package threadsched

import (
	"fmt"
	"runtime"
	"syscall"
	"unsafe"
)

// Lower sets the calling thread's nice value to nice; raising it needs no
// privilege. It does nothing where the OS refuses.
func Lower(nice int) {
	_ = syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), nice)
}

// schedFIFO is Linux's SCHED_FIFO policy.
const schedFIFO = 1

// Realtime puts the calling thread in the SCHED_FIFO class at priority
// 1, or returns why the OS refused.
func Realtime() error {
	param := struct{ priority int32 }{1}
	_, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_SETSCHEDULER, uintptr(syscall.Gettid()), schedFIFO, uintptr(unsafe.Pointer(&param)))
	if errno != 0 {
		return fmt.Errorf("sched_setscheduler SCHED_FIFO: %w (needs CAP_SYS_NICE or an RLIMIT_RTPRIO of 1 or more)", errno)
	}
	return nil
}

// RealtimePermitted reports whether this process may put a thread in the
// SCHED_FIFO class: it tries on a thread of its own, which ends with the
// goroutine that tries.
func RealtimePermitted() error {
	errs := make(chan error)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		errs <- Realtime()
	}()
	return <-errs
}
