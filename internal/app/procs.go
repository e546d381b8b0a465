package app

import (
	"log/slog"
	"os"
	"runtime"
	"slices"

	"github.com/robotexec/robotexec/internal/config"
	"github.com/robotexec/robotexec/internal/nodehooks"
)

// setProcs sets GOMAXPROCS by executor.procs, before the executor
// starts, and returns what it was, or 0 if it left it alone; once it is
// set, the raises that the workers' threads and the precise timer source
// ask for are not made. A procs of 0 sets it to 1 for a config that
// oneProc allows, where GOMAXPROCS is not in the environment, and else
// leaves it to Go and to those raises. extra is oneProc's.
func setProcs(cfg *config.Config, extra bool, logger *slog.Logger) (was int) {
	n := cfg.Executor.Procs
	if n == 0 {
		if _, set := os.LookupEnv("GOMAXPROCS"); set || !oneProc(cfg, extra) {
			return 0
		}
		n = 1
	}
	was = runtime.GOMAXPROCS(n)
	logger.Debug("GOMAXPROCS set by executor.procs", "gomaxprocs", n, "procs", cfg.Executor.Procs)
	return was
}

// oneProc reports whether cfg runs on one processor when executor.procs
// is 0: its nodes are all of types marked short (the built-in ones), on
// an external broker (the embedded one serves other clients too), with no
// work of the program's own (extra: callbacks of its own, or a recording
// of the run, which encodes every message again), without the live view
// (which does too), and without priority or pinned workers (threads of
// their own, each needing a processor).
//
// On one processor the MQTT client's goroutines and the workers hand
// messages to each other without waking an idle thread through the OS,
// which costs more than these callbacks: BENCHMARKS.md, Beside Node-RED,
// has the bridge's CPU per message and burst on one and on several.
func oneProc(cfg *config.Config, extra bool) bool {
	e := cfg.Executor
	switch {
	case extra, e.PriorityWorkers > 0, e.PinWorkers, cfg.View.Listen != "",
		slices.Contains(cfg.MQTT.Brokers, config.EmbeddedBroker):
		return false
	}
	for _, n := range cfg.Nodes {
		if !nodehooks.Short(n.Type) {
			return false
		}
	}
	return true
}
