package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/config"
	"github.com/robotexec/robotexec/internal/metrics"
	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/internal/view"
	"github.com/robotexec/robotexec/subscribers"
)

// viewFlags are the flags of robotexec view.
type viewFlags struct {
	client           clientFlags
	listen, origins  *string
	clockTopic       *string
	qos              *int
	anonymousPublish *bool
	clock            *bool
}

func addViewFlags(fs *flag.FlagSet) viewFlags {
	return viewFlags{
		client:           addClientFlags(fs),
		listen:           fs.String("listen", "", "`host:port` of the live view (default -config's view.listen, else "+DefaultViewListen+")"),
		qos:              fs.Int("qos", 0, "QoS of the subscriptions: 0, 1 or 2"),
		origins:          fs.String("allowed-origins", "", "comma-separated web `origins` whose pages may connect besides the view's own page, e.g. https://app.foxglove.dev (default -config's view.allowed_origins)"),
		anonymousPublish: fs.Bool("anonymous-publish", false, "let viewers without credentials publish on every topic (default -config's view.anonymous_publish)"),
		clock:            fs.Bool("clock", false, "offer the time capability: follow the clock topic's {\"time\": RFC3339Nano} messages and stamp messages with its time (default -config's executor.use_sim_time)"),
		clockTopic:       fs.String("clock-topic", "", "the clock topic (default -config's executor.clock_topic, else "+config.DefaultClockTopic+")"),
	}
}

// viewSettings are what robotexec view runs with: the server's options
// but its Publish and Logger, the GC headroom, where to serve metrics
// ("" for nowhere) and the clock topic followed ("" for none).
type viewSettings struct {
	opts       view.Options
	headroom   config.Size
	metrics    string
	clockTopic string
}

// settings checks the command line of robotexec view and resolves its
// settings: the flags given, else -config's view section (users and the
// anonymous rule by the rule of run's view.listen: a non-loopback address
// needs users or allow_anonymous; allowed_origins, anonymous_publish,
// max_topics), metrics.listen, executor.use_sim_time and clock_topic, and
// executor.gc_headroom, which the view keeps as run does.
func (f viewFlags) settings(filters []string) (viewSettings, error) {
	if *f.qos < 0 || *f.qos > 2 {
		return viewSettings{}, fmt.Errorf("-qos %d: want 0, 1 or 2", *f.qos)
	}
	for _, fl := range filters {
		if err := subscribers.ValidateFilter(fl); err != nil {
			return viewSettings{}, err
		}
	}
	cfg := &config.Config{Executor: config.Executor{GCHeadroom: config.DefaultGCHeadroom, ClockTopic: config.DefaultClockTopic, DrainTimeout: config.DefaultDrainTimeout}}
	if *f.client.config != "" {
		var err error
		if cfg, err = config.Load(*f.client.config); err != nil {
			return viewSettings{}, err
		}
	}
	v := cfg.View
	switch {
	case *f.listen != "":
		v.Listen = *f.listen
	case v.Listen == "":
		v.Listen = DefaultViewListen
	}
	if f.client.set("allowed-origins") {
		v.AllowedOrigins = nil // "" lists none
		for _, o := range strings.FieldsFunc(*f.origins, func(r rune) bool { return r == ',' }) {
			norm, err := config.ParseOrigin(o)
			if err != nil {
				return viewSettings{}, fmt.Errorf("-allowed-origins: %w", err)
			}
			v.AllowedOrigins = append(v.AllowedOrigins, norm)
		}
	}
	if f.client.set("anonymous-publish") {
		v.AnonymousPublish = *f.anonymousPublish
	}
	if len(v.Users) == 0 && !v.AnonymousAllowed() {
		return viewSettings{}, fmt.Errorf("-listen %s is reachable from the network: name who may connect in -config's view.users, or set its view.allow_anonymous: true to let anyone in", v.Listen)
	}
	if v.AnonymousPublish && !v.AnonymousAllowed() {
		return viewSettings{}, fmt.Errorf("-anonymous-publish: anonymous viewers are not let in: -config's view.users names who may connect (its view.allow_anonymous: true lets anyone in)")
	}
	vs := viewSettings{headroom: cfg.Executor.GCHeadroom, metrics: cfg.Metrics.Listen}
	if *f.clock || (cfg.Executor.UseSimTime && !f.client.set("clock")) {
		vs.clockTopic = cfg.Executor.ClockTopic
		if *f.clockTopic != "" {
			vs.clockTopic = *f.clockTopic
		}
		if err := subscribers.ValidateTopic(vs.clockTopic); err != nil {
			return viewSettings{}, fmt.Errorf("-clock-topic: %w", err)
		}
	}
	users := make([]view.User, len(v.Users))
	for i, u := range v.Users {
		users[i] = view.User{Username: u.Username, Password: u.Password, Read: u.Read, Write: u.Write}
	}
	vs.opts = view.Options{Listen: v.Listen, Name: "robotexec view", Users: users,
		Anonymous: v.AnonymousAllowed(), AnonymousPublish: v.AnonymousPublish, AllowedOrigins: v.AllowedOrigins,
		Echoed: true, ConnectionGraph: true, Time: vs.clockTopic != "", MaxChannels: v.MaxTopics}
	return vs, nil
}

// serveViewMetrics serves on ms the metrics of robotexec view: its
// subscriptions', its MQTT client's and the live view's, and /healthz
// (healthy while c is connected).
func serveViewMetrics(ms *metrics.Server, ex *executor.Executor, c *mqtt.Client, s *view.Server, logger *slog.Logger) {
	reg := metrics.NewRegistry(metrics.NewCollector(metrics.Sources{Executor: ex, MQTT: c, View: s}))
	health := func() metrics.Health {
		h := metrics.Health{Executor: "running", MQTT: "disconnected"}
		if c.Connected() {
			h.MQTT = "connected"
		}
		return h
	}
	ms.Serve(metrics.Handler(reg, health, logger.With("component", "metrics")))
	logger.Info("serving metrics", "addr", ms.Addr().String(), "paths", "/metrics /healthz /debug/pprof/")
}

// shutdownMetrics stops the metrics server, letting scrapes in progress
// finish for a while.
func shutdownMetrics(ms *metrics.Server, stderr io.Writer) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := ms.Shutdown(ctx); err != nil {
		fmt.Fprintln(stderr, "robotexec view: metrics:", err)
	}
}
