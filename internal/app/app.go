package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/config"
	"github.com/robotexec/robotexec/internal/gcpace"
	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/internal/mqtt/broker"
	"github.com/robotexec/robotexec/internal/nodehooks"
	"github.com/robotexec/robotexec/internal/ratelog"
	"github.com/robotexec/robotexec/internal/view"
	"github.com/robotexec/robotexec/nodes"
	"github.com/robotexec/robotexec/timers"
)

// App is a running config: its broker (embedded, or a client of an
// external one), executor and nodes, as robotexec run runs them.
type App struct {
	cfg    *config.Config
	log    *slog.Logger
	ex     *executor.Executor
	broker *broker.Broker
	client *mqtt.Client
	nodes  []*nodes.Node
	obs    *observability
	rec    *runRecording // with run -record
	graph  *grapher
	view   *view.Server  // with view.listen
	viewGr *GraphFeed    // the view's connection graph
	sim    *simClock     // with executor.use_sim_time
	gc     *gcpace.Pacer // executor.gc_headroom's; nil without
	done   chan error    // Run's result
	extra  bool          // Options.Extra was given
	// procsWas is GOMAXPROCS before executor.procs set it, restored at
	// the close; 0 when it was left alone.
	procsWas int

	version  string        // as the graph topic reports it
	connects chan struct{} // a pending connection to a broker, for the graph topic
	stopOnce sync.Once
	stopped  chan struct{}
	err      error // stop's, once stopped is closed
}

// Options are what robotexec run adds to a config. The zero value adds
// nothing.
type Options struct {
	// TraceRuns, when positive, records the last TraceRuns callback runs
	// for a Chrome trace (run -trace, -trace-runs): see App.WriteTrace.
	TraceRuns int
	// Record, when not empty, is the file that run -record writes.
	Record string
	// Version is the program's version as the graph topic reports it;
	// empty means the module's version (see Version).
	Version string
	// Extra, when not nil, adds callbacks of the program's own beside the
	// config's nodes: Start calls it with the nodes' environment (the
	// executor, the MQTT client's router, the logger) once they are built,
	// before the executor runs, and what it registers runs as theirs do.
	// Its error fails the start. robotexec bench measures a node's timers
	// under run this way, without a node type that every config could
	// name.
	Extra func(*nodes.Env) error
}

// Start starts what cfg describes, with opts: it embeds or connects to
// the broker, builds every node and runs the executor, and returns once
// the nodes run, their subscriptions acknowledged when the broker is there
// (at most 5 s). With executor.use_sim_time it first waits for the clock
// topic, until ctx ends. The config must have passed Check.
func Start(ctx context.Context, cfg *config.Config, logger *slog.Logger, opts Options) (*App, error) {
	a := &App{cfg: cfg, log: logger, version: Version(opts.Version), stopped: make(chan struct{}), extra: opts.Extra != nil}
	if err := a.start(ctx, opts); err != nil {
		a.close()
		return nil, err
	}
	return a, nil
}

// start is Start's work; on an error, Start closes what it opened.
func (a *App) start(ctx context.Context, opts Options) error {
	cfg, logger := a.cfg, a.log
	obs, err := newObservability(cfg, opts)
	if err != nil {
		return err
	}
	a.obs = obs
	a.gc = gcpace.Start(int64(cfg.Executor.GCHeadroom))
	if opts.Record != "" {
		if a.rec, err = openRunRecording(opts.Record, cfg, logger); err != nil {
			return err
		}
	}
	urls := []string(cfg.MQTT.Brokers)
	if len(urls) == 0 {
		urls = []string{cfg.MQTT.Broker} // a config that a program made and did not Check
	}
	if urls[0] == config.EmbeddedBroker {
		url, err := a.embed()
		if err != nil {
			return err
		}
		urls = []string{url}
	}
	mc := a.clientConfig(urls)
	if a.client, err = mqtt.Dial(mc); err != nil {
		return err
	}
	if err := a.newExecutor(ctx, mc, logger); err != nil {
		return err
	}
	if err := a.buildNodes(opts.Extra); err != nil {
		return err
	}
	a.run()
	args := []any{"config", cfg.File, "nodes", len(a.nodes), "workers", a.ex.Workers() - a.obs.prioWorkers}
	if a.obs.prioWorkers > 0 {
		args = append(args, "priority_workers", a.obs.prioWorkers)
	}
	if a.cfg.Executor.PinWorkers {
		args = append(args, "pin_workers", true)
	}
	if a.cfg.Executor.ReserveForTimers {
		args = append(args, "reserve_for_timers", true)
	}
	args = append(args, "procs", runtime.GOMAXPROCS(0), "broker", a.client.Broker())
	if bs := a.client.Brokers(); len(bs) > 1 {
		args = append(args, "brokers", bs)
	}
	logger.Info("robotexec running", args...)
	return nil
}

// embed starts the embedded broker and returns its URL.
func (a *App) embed() (string, error) {
	cfg := a.cfg
	bc := brokerConfig(cfg, ratelog.LimitFloods(a.log.With("component", "broker")))
	b, err := broker.New(bc)
	if err != nil {
		return "", fmt.Errorf("embedded broker on %s: %w", cfg.MQTT.Listen, err)
	}
	a.broker = b
	a.log.Info("embedded MQTT broker listening", "addr", b.Addr())
	return b.URL(), nil
}

// clientConfig returns the MQTT client's settings for the brokers at
// urls, tried in turn.
func (a *App) clientConfig(urls []string) mqtt.Config {
	cfg := a.cfg
	inProcess := cfg.Executor.InProcess // the client turns it off with MQTT 3.1.1, and says so
	a.connects = make(chan struct{}, 1)
	mc := mqtt.Config{
		Brokers:       urls,
		ClientID:      cfg.MQTT.ClientID,
		Username:      cfg.MQTT.Username,
		Password:      cfg.MQTT.Password,
		QoS:           byte(cfg.MQTT.QoS),
		Protocol:      cfg.MQTT.Protocol,
		CleanSession:  cfg.MQTT.CleanSession,
		SessionExpiry: cfg.MQTT.SessionExpiry,
		KeepAlive:     cfg.MQTT.KeepAlive,
		PingTimeout:   min(cfg.MQTT.KeepAlive, mqtt.DefaultPingTimeout),
		InProcess:     inProcess,
		Writable:      ownWritable(cfg),
		MaxPayload:    int(cfg.MQTT.MaxPayload),
		Linger:        cfg.MQTT.Linger,
		// A persistent session's queued messages arrive right after
		// connecting: hold them until every node has subscribed.
		StartPaused: true,
		// robotexec node list asks: the nodes of a cluster may not share
		// the retained graph and status.
		DescribeTopic: mqtt.DefaultDescribeTopic,
		// The graph topic names the broker: publish it again at once.
		OnConnect: func(string) {
			select {
			case a.connects <- struct{}{}:
			default:
			}
		},
		Logger: ratelog.LimitFloods(a.log.With("component", "mqtt")),
	}
	if inProcess && a.broker != nil {
		// Publications that no other client wants stay in the process.
		mc.Audience = a.broker.AudienceOf(cfg.MQTT.ClientID)
	}
	if t := cfg.MQTT.TLS; t != nil {
		mc.TLS = mqtt.TLSFiles{CA: t.CA, Cert: t.Cert, Key: t.Key}
	}
	return mc
}

// buildNodes builds every node of the config on the executor, behind the
// taps of a recording (run -record) and of the live view (view.listen),
// then what extra (Options.Extra), if not nil, adds beside them.
func (a *App) buildNodes(extra func(*nodes.Env) error) error {
	router := a.client.Router()
	e := NodeEnv(a.cfg, a.ex, router, a.log)
	if err := a.startView(router); err != nil {
		return err
	}
	ctx := nodehooks.With(context.Background(), a.attachTaps(router))
	for _, n := range a.cfg.Nodes {
		node, err := BuildNode(ctx, e, n)
		if err != nil {
			return err
		}
		a.nodes = append(a.nodes, node)
	}
	if extra == nil {
		return nil
	}
	return extra(e)
}

// run serves the observability endpoints, runs the executor and the graph
// topic, lets the client's messages in, and waits (at most readyWait) for
// the first connection and its subscriptions: "running" means subscribed
// when the broker is there, so that a message published after that line
// reaches the nodes. A broker that is away does not hold the start; the
// client subscribes on connecting.
func (a *App) run() {
	a.obs.serve(a)
	a.done = make(chan error, 1)
	a.obs.state.Store(stateRunning)
	go func() { a.done <- a.ex.Run(context.Background()) }()
	a.startGraph(time.Now())
	a.client.Resume()
	ctx, cancel := context.WithTimeout(context.Background(), readyWait)
	_ = a.client.WaitConnected(ctx)
	cancel()
}

// Shutdown stops the app as robotexec run does on SIGINT, with
// net/http.Server.Shutdown's contract: shared subscriptions leave their
// groups, the executor stops taking messages and drains its queues, the
// nodes' shutdown functions run, the graph topic is cleared, a recording
// is closed, and the client and the embedded broker close. It returns
// when all that is done, with the executor's error, or when ctx ends
// first, with ctx.Err(); the stop then carries on in the background, and a
// later Shutdown waits for it again.
func (a *App) Shutdown(ctx context.Context) error {
	a.stopOnce.Do(func() {
		go func() {
			a.err = a.stop()
			close(a.stopped)
		}()
	})
	select {
	case <-a.stopped:
		return a.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// stop stops the executor (which drains), runs the nodes' shutdown
// functions, then closes the client and the broker.
func (a *App) stop() error {
	// Shared subscriptions leave their groups first, so that the other
	// members take the whole load; what the broker gave this process
	// before is still delivered.
	a.closeView() // no viewer's publication enters while the executor drains
	ctx, cancel := context.WithTimeout(context.Background(), leaveShared)
	if err := a.client.LeaveShared(ctx); err != nil {
		a.log.Warn("leaving shared subscriptions", "error", err)
	}
	cancel()
	// Messages that arrive from now on stay unacknowledged (at the broker,
	// for a persistent session) instead of being taken and then dropped by
	// the closing subscriptions.
	a.client.Pause()
	a.obs.state.Store(stateStopping)
	err := a.drain()
	if rerr := <-a.done; err == nil {
		err = rerr
	}
	a.obs.state.Store(stateStopped)
	for i := len(a.nodes) - 1; i >= 0; i-- {
		a.nodes[i].Shutdown()
	}
	a.graph.clear()
	if a.rec != nil {
		rec := a.rec
		a.rec = nil
		if rerr := rec.end(a.ex.Clock().Now()); rerr != nil && err == nil {
			err = rerr
		}
	}
	a.close()
	return err
}

// drain stops the executor and waits for it to drain: past
// executor.drain_timeout, the callbacks' contexts are done (the drain
// deadline), and it waits on for what they leave.
func (a *App) drain() error {
	ctx, cancel := context.WithTimeout(context.Background(), a.cfg.Executor.DrainTimeout)
	defer cancel()
	err := a.ex.Shutdown(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	a.log.Warn("the drain deadline passed: the callbacks' contexts are done", "drain_timeout", a.cfg.Executor.DrainTimeout)
	return a.ex.Shutdown(context.Background())
}

// close closes what start opened. The client's and the broker's closes
// each have a bounded wait (closeClient, closeBroker, their Close's worst
// cases), detached from Shutdown's ctx: the stop carries on after that ctx
// ends (Shutdown's contract), and a later Shutdown waits for it. What did
// not stop in time is logged.
func (a *App) close() {
	a.closeView()
	if a.rec != nil {
		a.rec.abort()
	}
	closeWithin := func(what string, d time.Duration, closeContext func(context.Context) error) {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		if err := closeContext(ctx); err != nil {
			a.log.Warn("closing the "+what, "error", err)
		}
	}
	if a.client != nil {
		closeWithin("MQTT client", closeClient, a.client.Shutdown)
	}
	if a.broker != nil {
		closeWithin("embedded broker", closeBroker, a.broker.Shutdown)
	}
	if err := a.obs.close(); err != nil {
		a.log.Warn("metrics server", "error", err)
	}
	a.gc.Stop()
	if a.procsWas > 0 {
		runtime.GOMAXPROCS(a.procsWas)
	}
}

// closeClient and closeBroker bound the closes of the client (its queued
// publications, their acknowledgements, its goroutines) and of the
// embedded broker (its clients), a stop's last steps.
const (
	closeClient = 10 * time.Second
	closeBroker = 6 * time.Second
)

// leaveShared bounds the wait for the broker's answer when shared
// subscriptions leave their groups at a stop.
const leaveShared = 2 * time.Second

// readyWait bounds how long the start waits for the first connection and
// its subscriptions before saying "robotexec running".
const readyWait = 5 * time.Second

// timerClock returns the clock of executor.timer_source. With the precise
// source, the timer poller needs a processor when it wakes, even while
// every worker runs: GOMAXPROCS is raised to one above the workers, so that
// the Go scheduler always has one for it (the OS shares the cores; the
// thread, asleep most of the time, wins them when it wakes), where raise
// is set (executor.procs did not set it).
func timerClock(cfg *config.Config, workers int, raise bool, logger *slog.Logger) timers.Clock {
	if cfg.Executor.TimerSource != config.TimerSourcePrecise || !timers.PreciseSupported() {
		return timers.System{}
	}
	if raise && runtime.GOMAXPROCS(0) <= workers {
		runtime.GOMAXPROCS(workers + 1)
		logger.Debug("GOMAXPROCS raised above the workers for the precise timer source", "gomaxprocs", workers+1)
	}
	return timers.Precise{}
}
