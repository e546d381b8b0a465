package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/app"
	"github.com/robotexec/robotexec/internal/gcpace"
	"github.com/robotexec/robotexec/internal/metrics"
	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/internal/view"
	"github.com/robotexec/robotexec/subscribers"
)

// DefaultViewListen is where robotexec view listens without -listen.
const DefaultViewListen = "127.0.0.1:8765"

// viewDepth is the queue depth of the view's subscriptions: the callback
// only hands each message to the server, which never waits.
const viewDepth = 4096

func cmdView(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("view", "[flags] [FILTER...]", "Serve the live view (the Foxglove WebSocket protocol, foxglove.websocket.v1) of\nthe messages matching the topic filters (default '#') on the broker, until SIGINT\nor SIGTERM. A viewer's publications (clientPublish) go to the broker.", stderr)
	vf := addViewFlags(fs)
	if done, code := parseFlags(fs, args, stdout); done {
		return code
	}
	filters := fs.Args()
	if len(filters) == 0 {
		filters = []string{"#"}
	}
	vs, err := vf.settings(filters)
	if err != nil {
		fmt.Fprintln(stderr, "robotexec view:", err)
		return ExitUsage
	}
	var ms *metrics.Server
	if vs.metrics != "" {
		// Bound first, as robotexec run binds metrics.listen: a bad
		// address fails the command before it serves anything.
		if ms, err = metrics.Listen(vs.metrics); err != nil {
			fmt.Fprintln(stderr, "robotexec view:", err)
			return ExitFailure
		}
		defer shutdownMetrics(ms, stderr)
	}
	defer gcpace.Start(int64(vs.headroom)).Stop()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := vf.client.dial(ctx, stderr, byte(*vf.qos))
	if err != nil {
		fmt.Fprintln(stderr, "robotexec view:", err)
		return exitFor(err)
	}
	defer c.Close()
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	opts := vs.opts
	opts.Logger = logger.With("component", "view")
	opts.Publish = func(topic string, payload []byte) error {
		pctx, cancel := context.WithTimeout(ctx, *vf.client.timeout)
		defer cancel()
		return c.PublishWait(pctx, subscribers.Message{Topic: topic, Payload: payload, QoS: 1})
	}
	s, err := view.Listen(opts)
	if err != nil {
		fmt.Fprintln(stderr, "robotexec view:", err)
		return ExitFailure
	}
	defer s.Close()
	logger.Info("serving the live view", "addr", s.Addr().String(), "protocol", view.Subprotocol, "broker", c.Broker(), "filters", filters)
	if err := feedView(ctx, c, s, filters, vs.clockTopic, ms, logger); err != nil {
		fmt.Fprintln(stderr, "robotexec view:", err)
		return ExitFailure
	}
	return ExitOK
}

// feedView shows s every message that filters match on c's broker, the
// connection graph of the instances there, and, with a clockTopic, its
// time, until ctx ends; with ms, it serves the metrics there meanwhile.
func feedView(ctx context.Context, c *mqtt.Client, s *view.Server, filters []string, clockTopic string, ms *metrics.Server, logger *slog.Logger) error {
	ex := executor.New(executor.Options{Workers: 1, Logger: logger})
	stamp := func(m *subscribers.Message) {
		s.Observe(m.Topic, m.Payload, m.Received)
	}
	if clockTopic != "" {
		clock, err := app.FeedClock(ex.NewOwner("clock", nil), c, clockTopic, s, logger.With("component", "view"))
		if err != nil {
			return err
		}
		stamp = func(m *subscribers.Message) { s.Observe(m.Topic, m.Payload, clock.Stamp(m.Received)) }
		logger.Info("following the clock topic", "topic", clockTopic)
	}
	o := ex.NewOwner("view", nil)
	for _, f := range filters {
		_, err := o.Subscribe(c, f, func(ctx context.Context, m subscribers.Message) { stamp(&m) },
			executor.Depth(viewDepth), executor.Overflow(subscribers.DropOldest))
		if err != nil {
			return err
		}
	}
	if _, err := app.FeedGraph(ex.NewOwner("graph", nil), c, s, ""); err != nil {
		return err
	}
	if ms != nil {
		serveViewMetrics(ms, ex, c, s, logger)
	}
	return ex.Run(ctx)
}
