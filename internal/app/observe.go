package app

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/chrometrace"
	"github.com/robotexec/robotexec/internal/config"
	"github.com/robotexec/robotexec/internal/metrics"
	"github.com/robotexec/robotexec/internal/observers"
)

// Executor states, as /healthz reports them.
const (
	stateStarting int32 = iota
	stateRunning
	stateStopping
	stateStopped
)

var stateNames = [...]string{"starting", "running", "stopping", "stopped"}

// metricsShutdown bounds the wait for scrapes in progress at the end.
const metricsShutdown = 2 * time.Second

// observability is a running config's metrics server, run timing and
// trace recorder; each is nil when not asked for.
type observability struct {
	workers int
	// prioWorkers is executor.priority_workers: their IDs follow the
	// workers'.
	prioWorkers int
	runs        *observers.Runs
	trace       *chrometrace.Recorder
	server      *metrics.Server
	state       atomic.Int32
}

// metricsURL is the URL of the /metrics served, at listen's host and the
// port bound (listen's port may be 0); "" for none.
func (o *observability) metricsURL(listen string) string {
	if o.server == nil {
		return ""
	}
	host, _, err := net.SplitHostPort(listen)
	_, port, perr := net.SplitHostPort(o.server.Addr().String())
	if err != nil || perr != nil {
		return ""
	}
	return metricsURL(net.JoinHostPort(host, port))
}

// newObservability binds the metrics address, if the config has one, and
// makes the observer that times the runs, if metrics or a trace need it.
func newObservability(cfg *config.Config, opts Options) (*observability, error) {
	o := &observability{workers: cfg.Executor.Workers}
	if o.workers <= 0 {
		o.workers = runtime.GOMAXPROCS(0) // the executor's default
	}
	o.prioWorkers = cfg.Executor.PriorityWorkers
	if cfg.Metrics.Listen != "" {
		s, err := metrics.Listen(cfg.Metrics.Listen)
		if err != nil {
			return nil, fmt.Errorf("metrics.listen: %w", err)
		}
		o.server = s
	}
	if opts.TraceRuns > 0 {
		o.trace = chrometrace.New(o.workers+o.prioWorkers, opts.TraceRuns)
	}
	// The live view's page shows the callbacks' figures too.
	if o.server != nil || o.trace != nil || cfg.View.Listen != "" {
		o.runs = observers.New(observers.Options{Workers: o.workers + o.prioWorkers, Trace: o.trace})
	}
	return o, nil
}

// executorOptions adds the run observer to the executor's options.
func (o *observability) executorOptions(opts executor.Options) executor.Options {
	if o.runs != nil {
		opts.Runs = o.runs
		opts.Stamp = o.runs.Stamp
	}
	return opts
}

// serve starts serving metrics, health and pprof for a, whose executor
// and client exist and whose nodes are built, and gives the live view's
// page the callbacks' figures.
func (o *observability) serve(a *App) {
	if o.runs != nil {
		o.runs.Register(a.ex)
	}
	if o.server == nil && a.view == nil {
		return
	}
	src := metrics.Sources{Executor: a.ex, Runs: o.runs, MQTT: a.client}
	if a.broker != nil {
		src.Broker = a.broker
	}
	if a.view != nil {
		src.View = a.view
	}
	c := metrics.NewCollector(src)
	health := func() metrics.Health {
		h := metrics.Health{Executor: stateNames[o.state.Load()], MQTT: "disconnected"}
		if a.client.Connected() {
			h.MQTT = "connected"
		}
		return h
	}
	reg := metrics.NewRegistry(c)
	if a.view != nil {
		a.view.SetStats(metrics.SummaryHandler(reg))
	}
	if o.server == nil {
		return
	}
	o.server.Serve(metrics.Handler(reg, health, a.log.With("component", "metrics")))
	a.log.Info("serving metrics", "addr", o.server.Addr().String(), "paths", "/metrics /healthz /debug/pprof/", "clock", o.runs.Clock())
}

// close stops the metrics server, letting scrapes in progress finish.
func (o *observability) close() error {
	if o == nil || o.server == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), metricsShutdown)
	defer cancel()
	return o.server.Shutdown(ctx)
}

// writeTrace writes the recorded runs to w as Chrome trace-event JSON. It
// must be called once the executor has stopped.
func (o *observability) writeTrace(w io.Writer) (int64, error) {
	return o.runs.WriteTrace(w, chrometrace.WriteOptions{PID: os.Getpid()})
}

// traceStats returns the number of runs kept in the trace and recorded in
// all.
func (o *observability) traceStats() (kept int, recorded uint64) {
	return o.trace.Len()
}

// WriteTrace writes the recorded runs to f as Chrome trace-event JSON,
// closes it, and logs it. The app must be shut down; one started without
// Options.TraceRuns has no trace to write, which is an error.
func (a *App) WriteTrace(f *os.File) error {
	if a.obs.trace == nil {
		f.Close()
		return fmt.Errorf("trace %s: the app records no trace (Options.TraceRuns is 0)", f.Name())
	}
	n, err := a.obs.writeTrace(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("trace %s: %w", f.Name(), err)
	}
	kept, recorded := a.obs.traceStats()
	a.log.Info("trace written", "file", f.Name(), "runs", kept, "overwritten", recorded-uint64(kept), "bytes", n)
	return nil
}
