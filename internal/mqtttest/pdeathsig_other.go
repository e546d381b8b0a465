//go:build !linux

package mqtttest

import "os/exec"

func setPdeathsig(*exec.Cmd) {}
