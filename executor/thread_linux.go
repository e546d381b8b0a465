package executor

import (
	"fmt"
	"syscall"
	"unsafe"
)

// lowerThread sets the calling thread's nice value to nice; raising it
// needs no privilege. It does nothing where the OS refuses.
func lowerThread(nice int) {
	_ = syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), nice)
}

// schedFIFO is Linux's SCHED_FIFO policy.
const schedFIFO = 1

// realtimeThread puts the calling thread in the SCHED_FIFO class at
// priority 1, or returns why the OS refused.
func realtimeThread() error {
	param := struct{ priority int32 }{1}
	_, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_SETSCHEDULER, uintptr(syscall.Gettid()), schedFIFO, uintptr(unsafe.Pointer(&param)))
	if errno != 0 {
		return fmt.Errorf("sched_setscheduler SCHED_FIFO: %w (needs CAP_SYS_NICE or an RLIMIT_RTPRIO of 1 or more)", errno)
	}
	return nil
}
