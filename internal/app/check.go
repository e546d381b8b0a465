package app

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/config"
	"github.com/robotexec/robotexec/nodes"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// Check checks what config.Load cannot: node types, and node params by
// building every node in a dry run, on an executor that never runs, a
// simulated clock and an in-process router. It returns every problem,
// parseErr's included, in file order.
func Check(cfg *config.Config, parseErr error) error {
	errs := append([]error{parseErr}, userErrors(cfg)...)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	env := dryEnv(cfg, quiet)
	for _, n := range cfg.Nodes {
		if n.Name == "" || n.Type == "" {
			continue // Parse reported it
		}
		if _, ok := nodes.Lookup(n.Type); !ok {
			errs = append(errs, unknownType(n))
			continue
		}
		_, err := nodes.Build(context.Background(), env, spec(n))
		errs = append(errs, nodeErrors(n, err)...)
	}
	return config.Join(errs...)
}

// TypeNames returns the names of the registered node types, sorted.
func TypeNames() []string {
	var names []string
	for _, t := range nodes.Types() {
		names = append(names, t.Name)
	}
	return names
}

// unknownType is the error of node n, whose type is not registered.
func unknownType(n config.Node) error {
	known := TypeNames()
	if best := config.Closest(n.Type, known); best != "" {
		return n.Errorf("type", "unknown node type %q; did you mean %q?", n.Type, best)
	}
	return n.Errorf("type", "unknown node type %q (known: %s)", n.Type, strings.Join(known, ", "))
}

func dryEnv(cfg *config.Config, logger *slog.Logger) *nodes.Env {
	ex := executor.New(executor.Options{Workers: 1, Clock: timers.NewSim(time.Now()), Logger: logger})
	return NodeEnv(cfg, ex, new(subscribers.Router), logger)
}

// NodeEnv is what cfg's nodes are built with: ex, the router r their
// publications and subscriptions go through, logger, and the config's
// queue defaults (mqtt.qos, executor.queue_depth, executor.overflow: when
// not set, by QoS).
func NodeEnv(cfg *config.Config, ex *executor.Executor, r *subscribers.Router, logger *slog.Logger) *nodes.Env {
	env := &nodes.Env{
		Executor: ex,
		Router:   r,
		Logger:   logger,
		QoS:      byte(cfg.MQTT.QoS),
		Depth:    cfg.Executor.QueueDepth,
	}
	if cfg.Executor.Overflow != "" {
		var policy subscribers.Policy
		_ = policy.UnmarshalText([]byte(cfg.Executor.Overflow)) // checked by config
		env.Overflow = &policy
	}
	return env
}

// LoadAndCheck loads the config file at path and checks it fully (Check).
func LoadAndCheck(path string) (*config.Config, error) {
	cfg, err := config.Load(path)
	if cfg == nil {
		return nil, err
	}
	if err := Check(cfg, err); err != nil {
		return nil, err
	}
	return cfg, nil
}

// BuildNode builds node n of a config that passed Check with e, and the
// hooks ctx carries (nodehooks.With); its problems carry n's file and
// lines (config.Errors).
func BuildNode(ctx context.Context, e *nodes.Env, n config.Node) (*nodes.Node, error) {
	node, err := nodes.Build(ctx, e, spec(n))
	if err != nil {
		return nil, config.Join(nodeErrors(n, err)...)
	}
	return node, nil
}

func spec(n config.Node) nodes.Spec {
	// A negative priority is the config's error, reported once: the node
	// is built at the lowest.
	return nodes.Spec{Name: n.Name, Type: n.Type, Group: n.Group, Priority: max(n.Priority, 0), Params: n.Params}
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
