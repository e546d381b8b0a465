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

// cpuSet is Linux's cpu_set_t: a bit per CPU, 1,024 CPUs.
type cpuSet [1024 / 64]uint64

// Allowed returns the CPUs the calling thread may run on (its affinity
// mask, which a thread inherits from the one that made it: taskset's
// choice for the whole process), in ascending order.
func Allowed() ([]int, error) {
	var set cpuSet
	_, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_GETAFFINITY, 0, unsafe.Sizeof(set), uintptr(unsafe.Pointer(&set)))
	if errno != 0 {
		return nil, fmt.Errorf("sched_getaffinity: %w", errno)
	}
	var cpus []int
	for i, word := range set {
		for b := range 64 {
			if word&(1<<b) != 0 {
				cpus = append(cpus, i*64+b)
			}
		}
	}
	return cpus, nil
}

// Pin binds the calling thread to cpu: the OS runs it there only.
func Pin(cpu int) error {
	var set cpuSet
	if cpu < 0 || cpu >= len(set)*64 {
		return fmt.Errorf("sched_setaffinity: CPU %d out of range", cpu)
	}
	set[cpu/64] = 1 << (cpu % 64)
	_, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, 0, unsafe.Sizeof(set), uintptr(unsafe.Pointer(&set)))
	if errno != 0 {
		return fmt.Errorf("sched_setaffinity CPU %d: %w", cpu, errno)
	}
	return nil
}
