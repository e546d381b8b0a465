package robotexec_test

// The CPU time that BenchmarkRecord measures, of processes and of the
// machine, read from /proc.

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
)

// procCPU returns the user and system CPU seconds of process pid (the
// machine's, all CPUs', for 0) from /proc; NaN when it cannot.
func procCPU(pid int) float64 {
	var user, nice, system float64
	if pid == 0 {
		data, _ := os.ReadFile("/proc/stat")
		if _, err := fmt.Sscanf(string(data), "cpu %f %f %f", &user, &nice, &system); err != nil {
			return math.NaN()
		}
		return (user + nice + system) / clockTicks
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return math.NaN()
	}
	// The fields after the command's name in parentheses: utime and
	// stime are the 12th and 13th.
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	user, _ = strconv.ParseFloat(f[11], 64)
	system, _ = strconv.ParseFloat(f[12], 64)
	return (user + system) / clockTicks
}

// cpuSampler reads the CPU time of the machine and of some processes
// every 20 ms, so that a phase's CPU is measured over exactly its span.
type cpuSampler struct {
	pids       []int
	stop, done chan struct{}
	at         []time.Time
	v          [][]float64 // per sample: the machine's, then each process's
}

func sampleCPU(pids ...int) *cpuSampler {
	s := &cpuSampler{pids: append([]int{0}, pids...), stop: make(chan struct{}), done: make(chan struct{})}
	s.sample()
	go func() {
		defer close(s.done)
		for {
			select {
			case <-s.stop:
				return
			case <-time.After(20 * time.Millisecond):
				s.sample()
			}
		}
	}()
	return s
}

func (s *cpuSampler) sample() {
	v := make([]float64, len(s.pids))
	for i, pid := range s.pids {
		v[i] = procCPU(pid)
	}
	s.at, s.v = append(s.at, time.Now()), append(s.v, v)
}

// end stops sampling and returns the CPU seconds per second used from t0
// to t1 (at the samples around them): the machine's, then each
// process's.
func (s *cpuSampler) end(t0, t1 time.Time) []float64 {
	close(s.stop)
	<-s.done
	i0, i1 := 0, len(s.at)-1
	for i, at := range s.at {
		if !at.After(t0) {
			i0 = i
		}
		if !at.Before(t1) && i < i1 {
			i1 = i
		}
	}
	out := make([]float64, len(s.pids))
	for k := range out {
		out[k] = (s.v[i1][k] - s.v[i0][k]) / s.at[i1].Sub(s.at[i0]).Seconds()
	}
	return out
}
