package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/robotexec/robotexec/config"
	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/app"
	"github.com/robotexec/robotexec/internal/gcpace"
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
	cf := addClientFlags(fs)
	listen := fs.String("listen", "", "`host:port` of the live view (default -config's view.listen, else "+DefaultViewListen+")")
	qos := fs.Int("qos", 0, "QoS of the subscriptions: 0, 1 or 2")
	if done, code := parseFlags(fs, args, stdout); done {
		return code
	}
	filters := fs.Args()
	if len(filters) == 0 {
		filters = []string{"#"}
	}
	opts, headroom, err := viewOptions(cf, *listen, filters, *qos)
	if err != nil {
		fmt.Fprintln(stderr, "robotexec view:", err)
		return ExitUsage
	}
	defer gcpace.Start(int64(headroom)).Stop()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := cf.dial(ctx, stderr, byte(*qos))
	if err != nil {
		fmt.Fprintln(stderr, "robotexec view:", err)
		return exitFor(err)
	}
	defer c.Close()
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	opts.Logger = logger.With("component", "view")
	opts.Publish = func(topic string, payload []byte) error {
		pctx, cancel := context.WithTimeout(ctx, *cf.timeout)
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
	if err := feedView(ctx, c, s, filters, logger); err != nil {
		fmt.Fprintln(stderr, "robotexec view:", err)
		return ExitFailure
	}
	return ExitOK
}

// viewOptions checks the command line of robotexec view and returns the
// server's options but its Publish and Logger: the users and the
// anonymous rule of -config's view section, by the rule of run's
// view.listen (a non-loopback address needs users or allow_anonymous);
// and -config's executor.gc_headroom, which the view keeps as run does.
func viewOptions(cf clientFlags, listen string, filters []string, qos int) (view.Options, config.Size, error) {
	if qos < 0 || qos > 2 {
		return view.Options{}, 0, fmt.Errorf("-qos %d: want 0, 1 or 2", qos)
	}
	for _, f := range filters {
		if err := subscribers.ValidateFilter(f); err != nil {
			return view.Options{}, 0, err
		}
	}
	var v config.View
	headroom := config.DefaultGCHeadroom
	if *cf.config != "" {
		cfg, err := config.Load(*cf.config)
		if err != nil {
			return view.Options{}, 0, err
		}
		v, headroom = cfg.View, cfg.Executor.GCHeadroom
	}
	switch {
	case listen != "":
		v.Listen = listen
	case v.Listen == "":
		v.Listen = DefaultViewListen
	}
	if len(v.Users) == 0 && !v.AnonymousAllowed() {
		return view.Options{}, 0, fmt.Errorf("-listen %s is reachable from the network: name who may connect in -config's view.users, or set its view.allow_anonymous: true to let anyone in", v.Listen)
	}
	users := make([]view.User, len(v.Users))
	for i, u := range v.Users {
		users[i] = view.User{Username: u.Username, Password: u.Password, Read: u.Read, Write: u.Write}
	}
	return view.Options{Listen: v.Listen, Name: "robotexec view", Users: users,
		Anonymous: v.AnonymousAllowed(), Echoed: true, ConnectionGraph: true}, headroom, nil
}

// feedView shows s every message that filters match on c's broker, and
// the connection graph of the instances there, until ctx ends.
func feedView(ctx context.Context, c *mqtt.Client, s *view.Server, filters []string, logger *slog.Logger) error {
	ex := executor.New(executor.Options{Workers: 1, Logger: logger})
	o := ex.NewOwner("view", nil)
	for _, f := range filters {
		_, err := o.Subscribe(c, f, func(m subscribers.Message) {
			s.Observe(m.Topic, m.Payload, m.Received)
		}, executor.Depth(viewDepth), executor.Overflow(subscribers.DropOldest))
		if err != nil {
			return err
		}
	}
	if _, err := app.FeedGraph(ex.NewOwner("graph", nil), c, s, ""); err != nil {
		return err
	}
	return ex.Run(ctx)
}
