package mqtttest

import (
	"os/exec"
	"runtime"
)

// startKept starts cmd, which the kernel kills when the test binary dies
// (setPdeathsig), from a thread kept until cmd exits, and returns a
// channel closed once cmd has exited and been waited for.
//
// Linux sends the parent-death signal when the thread that started the
// child ends, not the process, and Go ends a thread whose goroutine exits
// locked to it, as the executor's pinned and priority workers do: a
// broker started from a thread that such a worker later took would be
// killed when the executor stopped.
func startKept(cmd *exec.Cmd) (<-chan struct{}, error) {
	setPdeathsig(cmd)
	started := make(chan error, 1)
	exit := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			runtime.UnlockOSThread()
			started <- err
			return
		}
		started <- nil
		_ = cmd.Wait()
		close(exit)
		// The goroutine ends locked, and the thread with it: the child
		// has exited.
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return exit, nil
}

// runKept runs cmd as cmd.CombinedOutput does, which the kernel kills when
// the test binary dies, on a thread kept until it exits (see startKept).
func runKept(cmd *exec.Cmd) ([]byte, error) {
	setPdeathsig(cmd)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return cmd.CombinedOutput()
}
