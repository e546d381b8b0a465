package bench

// The run group: workloads measured as users run them, in a `robotexec
// run` process (its config, timer source and GC pacing, its broker
// connection open), beside baselines measured in the same run.

func (s *suite) run() ([]Metric, error) {
	return append(s.runBridge(), s.runTimers()...), nil
}
