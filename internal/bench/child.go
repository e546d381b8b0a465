package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"time"
)

// ChildEnv names the environment variable that turns `robotexec bench`
// into one of the suite's child processes: a baseline that must run in a
// process of its own to be measured as one (its CPU and RSS), such as a
// raw forwarder beside a `robotexec run` process. Its value is the role;
// the command's arguments are the role's.
const ChildEnv = "ROBOTEXEC_BENCH_CHILD"

// childRoles are the roles of RunChild, by name: each runs until ctx ends
// or it fails.
var childRoles = map[string]func(ctx context.Context, args []string) error{}

// RunChild runs the child process role with args, until ctx ends.
func RunChild(ctx context.Context, role string, args []string) error {
	f, ok := childRoles[role]
	if !ok {
		names := make([]string, 0, len(childRoles))
		for n := range childRoles {
			names = append(names, n)
		}
		sort.Strings(names)
		return fmt.Errorf("bench: no child role %q (roles: %s)", role, strings.Join(names, ", "))
	}
	return f(ctx, args)
}

// ErrNoExecutable is the reason the rows that start robotexec processes
// are not measured where the suite runs without its executable (the
// bench package's own tests): `robotexec bench` measures them.
var ErrNoExecutable = errors.New("run robotexec bench: these rows start robotexec processes")

// robotexec returns a command of the robotexec executable with args, or
// ErrNoExecutable; the suite's end interrupts it (SIGINT).
func (s *suite) robotexec(args ...string) (*exec.Cmd, error) {
	if s.cfg.Executable == "" {
		return nil, ErrNoExecutable
	}
	cmd := exec.CommandContext(s.ctx, s.cfg.Executable, args...)
	cmd.Env = os.Environ()
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	return cmd, nil
}

// child returns a command of the robotexec executable in the child role
// role, with args.
func (s *suite) child(role string, args ...string) (*exec.Cmd, error) {
	cmd, err := s.robotexec(append([]string{"bench"}, args...)...)
	if err != nil {
		return nil, err
	}
	cmd.Env = append(cmd.Env, ChildEnv+"="+role)
	return cmd, nil
}

// procCPU returns the CPU time, user and system, that process pid has
// used (Linux: /proc/PID/stat).
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The fields after the command's name, which is in parentheses and
	// may hold spaces: state is the first, utime the 12th, stime the 13th.
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	if i < 0 || len(f) < 13 {
		return 0, fmt.Errorf("bench: /proc/%d/stat: unexpected format", pid)
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return time.Duration(ut+st) * time.Second / clockTicks, nil
}

// clockTicks is the kernel's USER_HZ, the unit of /proc's CPU times: 100
// on every Linux architecture Go supports.
const clockTicks = 100

// procRSS returns the resident set size of process pid, in bytes (Linux:
// VmRSS of /proc/PID/status).
func procRSS(pid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("bench: /proc/%d/status has no VmRSS", pid)
}
