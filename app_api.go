package robotexec

import (
	"context"
	"errors"
	"log/slog"

	"github.com/robotexec/robotexec/config"
	"github.com/robotexec/robotexec/internal/app"
	"github.com/robotexec/robotexec/internal/facade"
	_ "github.com/robotexec/robotexec/nodes/builtin" // the built-in node types
)

// App is a config running in a Go program: its broker (embedded, or a
// client of an external one), executor and nodes, as robotexec run runs
// them.
type App struct {
	a *app.App
}

// Start starts what cfg describes (config.Load or config.Parse): it
// checks it fully, embeds or connects to the broker, builds every node
// and runs the executor, and returns once the nodes run, their
// subscriptions acknowledged when the broker is there (at most 5 s). With
// executor.use_sim_time it first waits for the clock topic, until ctx
// ends. A bad config fails with every problem (see config.Errors); logger
// nil means slog.Default().
func Start(ctx context.Context, public *config.Config, logger *slog.Logger) (*App, error) {
	if public == nil {
		return nil, errors.New("robotexec: Start: no config")
	}
	cfg := facade.Config(public)
	if err := app.Check(cfg, nil); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.Default()
	}
	a, err := app.Start(ctx, cfg, logger, app.Options{Version: Version})
	if err != nil {
		return nil, err
	}
	return &App{a: a}, nil
}

// Shutdown stops the app as robotexec run does on SIGINT, with
// net/http.Server.Shutdown's contract: shared subscriptions leave their
// groups, the executor stops taking messages and drains its queues, the
// nodes' shutdown functions run, the graph topic is cleared, and the
// client and the embedded broker close. It returns when all that is done,
// with the executor's error, or when ctx ends first, with ctx.Err(); the
// stop then carries on in the background, and a later Shutdown waits for
// it again.
func (x *App) Shutdown(ctx context.Context) error {
	return x.a.Shutdown(ctx)
}
