package mqtttest

import (
	"os/exec"
	"syscall"
)

// setPdeathsig makes the kernel kill cmd when the test binary dies, so that
// a crashed test leaves no broker behind.
func setPdeathsig(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
