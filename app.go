package robotexec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"time"

	"github.com/robotexec/robotexec/config"
	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/nodes"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/subscribers/mqtt"
	"github.com/robotexec/robotexec/subscribers/mqtt/broker"
	"github.com/robotexec/robotexec/timers"
)

// check checks what config.Load cannot: node types, and node params by
// building every node in a dry run, on an executor that never runs, a
// simulated clock and an in-process router. It returns every problem,
// parseErr's included, in file order.
func check(cfg *config.Config, parseErr error) error {
	errs := append([]error{parseErr}, userErrors(cfg)...)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	env := dryEnv(cfg, quiet)
	for _, n := range cfg.Nodes {
		if n.Name == "" || n.Type == "" {
			continue // Parse reported it
		}
		if _, ok := nodes.Lookup(n.Type); !ok {
			errs = append(errs, n.Errorf("type", "unknown node type %q (known: %s)", n.Type, strings.Join(nodes.TypeNames(), ", ")))
			continue
		}
		_, err := nodes.Build(env, spec(n))
		errs = append(errs, nodeErrors(n, err)...)
	}
	return config.Join(errs...)
}

func dryEnv(cfg *config.Config, logger *slog.Logger) *nodes.Env {
	ex := executor.New(executor.Options{Workers: 1, Clock: timers.NewSim(time.Now()), Logger: logger})
	return env(cfg, ex, new(subscribers.Router), logger)
}

func env(cfg *config.Config, ex *executor.Executor, r *subscribers.Router, logger *slog.Logger) *nodes.Env {
	policy, _ := subscribers.ParsePolicy(cfg.Executor.Overflow) // checked by config
	return &nodes.Env{
		Executor: ex,
		Router:   r,
		Logger:   logger,
		QoS:      byte(cfg.MQTT.QoS),
		Depth:    cfg.Executor.QueueDepth,
		Overflow: policy,
	}
}

func spec(n config.Node) nodes.Spec {
	return nodes.Spec{Name: n.Name, Type: n.Type, Group: n.Group, Params: n.Params}
}

// nodeErrors locates the problems of building node n in the config file:
// params errors carry their own lines; the others get the node's.
func nodeErrors(n config.Node, err error) []error {
	if err == nil {
		return nil
	}
	var be *nodes.BuildError
	if !errors.As(err, &be) {
		return []error{n.Errorf("", "%v", err)}
	}
	var out []error
	for _, e := range be.Errs {
		if ces := config.Errors(e); len(ces) > 0 {
			for _, ce := range ces {
				out = append(out, ce)
			}
			continue
		}
		out = append(out, n.Errorf("", "%s (%s): %v", be.Node, be.Type, e))
	}
	return out
}

// app is a running config: executor, broker, client and nodes.
type app struct {
	cfg    *config.Config
	log    *slog.Logger
	ex     *executor.Executor
	broker *broker.Broker
	client *mqtt.Client
	nodes  []*nodes.Node
	obs    *observability
	rec    *runRecording // with run -record
	graph  *grapher
	cancel context.CancelFunc
	done   chan error
}

// start starts what cfg describes, with the run command's options. The
// config must have passed check.
func start(ctx context.Context, cfg *config.Config, logger *slog.Logger, opts runOptions) (*app, error) {
	a := &app{cfg: cfg, log: logger}
	obs, err := newObservability(cfg, opts)
	if err != nil {
		return nil, err
	}
	a.obs = obs
	if opts.record != "" {
		if a.rec, err = openRunRecording(opts.record, cfg, logger); err != nil {
			a.close()
			return nil, err
		}
	}
	url := cfg.MQTT.Broker
	inProcess := cfg.Executor.InProcess
	if url == config.EmbeddedBroker {
		bc := brokerConfig(cfg, limitFloods(logger.With("component", "broker")))
		if inProcess {
			// The nodes' publications reach this process's subscriptions
			// directly: the broker must not send them back. The client's
			// own topics (its status, its fences) are not the nodes'.
			own := fmt.Sprintf("robotexec/%s/", cfg.MQTT.ClientID)
			bc.NoLocal = func(id, filter string) bool {
				return id == cfg.MQTT.ClientID && !strings.HasPrefix(filter, own)
			}
		}
		b, err := broker.New(bc)
		if err != nil {
			a.close()
			return nil, fmt.Errorf("embedded broker on %s: %w", cfg.MQTT.Listen, err)
		}
		a.broker = b
		url = b.URL()
		logger.Info("embedded MQTT broker listening", "addr", b.Addr())
	}
	mc := mqtt.Config{
		Broker:       url,
		ClientID:     cfg.MQTT.ClientID,
		Username:     cfg.MQTT.Username,
		Password:     cfg.MQTT.Password,
		QoS:          byte(cfg.MQTT.QoS),
		CleanSession: cfg.MQTT.CleanSession,
		KeepAlive:    cfg.MQTT.KeepAlive,
		PingTimeout:  min(cfg.MQTT.KeepAlive, mqtt.DefaultPingTimeout),
		InProcess:    inProcess,
		Writable:     ownWritable(cfg),
		MaxPayload:   int(cfg.MQTT.MaxPayload),
		NoEcho:       inProcess && a.broker != nil,
		// A persistent session's queued messages arrive right after
		// connecting: hold them until every node has subscribed.
		StartPaused: true,
		Logger:      limitFloods(logger.With("component", "mqtt")),
	}
	if inProcess && a.broker != nil {
		// Publications that no other client wants stay in the process.
		mc.Audience = a.broker.AudienceOf(cfg.MQTT.ClientID)
	}
	if t := cfg.MQTT.TLS; t != nil {
		mc.TLS = mqtt.TLSFiles{CA: t.CA, Cert: t.Cert, Key: t.Key}
	}
	client, err := mqtt.Dial(mc)
	if err != nil {
		a.close()
		return nil, err
	}
	a.client = client
	if err := a.newExecutor(ctx, mc, logger); err != nil {
		a.close()
		return nil, err
	}
	e := env(cfg, a.ex, client.Router(), logger)
	if a.rec != nil {
		a.rec.begin(a.ex.Clock().Now())
		a.rec.attach(e, client.Router())
	}
	for _, n := range cfg.Nodes {
		node, err := nodes.Build(e, spec(n))
		if err != nil {
			a.close()
			return nil, config.Join(nodeErrors(n, err)...)
		}
		a.nodes = append(a.nodes, node)
	}
	a.obs.serve(a)
	ctx, cancel := context.WithCancel(context.Background())
	a.cancel = cancel
	a.done = make(chan error, 1)
	a.obs.state.Store(stateRunning)
	go func() { a.done <- a.ex.Run(ctx) }()
	a.startGraph(time.Now())
	client.Resume()
	// "running" means subscribed when the broker is there: a message
	// published after that line reaches the nodes. A broker that is away
	// does not hold the start; the client subscribes on connecting.
	wctx, wcancel := context.WithTimeout(ctx, readyWait)
	_ = client.WaitConnected(wctx)
	wcancel()
	logger.Info("robotexec running", "config", cfg.File, "nodes", len(a.nodes), "workers", a.ex.Workers(), "broker", client.Broker())
	return a, nil
}

// stop stops the executor (which drains), runs the nodes' shutdown
// functions, then closes the client and the broker.
func (a *app) stop() error {
	// Shared subscriptions leave their groups first, so that the other
	// members take the whole load; what the broker gave this process
	// before is still delivered.
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
	a.cancel()
	err := <-a.done
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

func (a *app) close() {
	if a.rec != nil {
		a.rec.abort()
	}
	if a.client != nil {
		a.client.Close()
	}
	if a.broker != nil {
		a.broker.Close()
	}
	if err := a.obs.close(); err != nil {
		a.log.Warn("metrics server", "error", err)
	}
}

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
// thread, asleep most of the time, wins them when it wakes).
func timerClock(cfg *config.Config, workers int, logger *slog.Logger) timers.Clock {
	if cfg.Executor.TimerSource != config.TimerSourcePrecise || !timers.PreciseSupported() {
		return timers.System{}
	}
	if runtime.GOMAXPROCS(0) <= workers {
		runtime.GOMAXPROCS(workers + 1)
		logger.Debug("GOMAXPROCS raised above the workers for the precise timer source", "gomaxprocs", workers+1)
	}
	return timers.Precise{}
}
