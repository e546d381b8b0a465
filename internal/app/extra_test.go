package app

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/nodes"
	"github.com/robotexec/robotexec/timers"
)

// TestStartExtra: Options.Extra gets the nodes' environment once the
// config's nodes are built, and what it registers runs on the app's
// executor; its error fails the start.
func TestStartExtra(t *testing.T) {
	t.Parallel()
	cfg := loadConfig(t, `executor: { workers: 1, timer_source: go }
mqtt: { listen: "127.0.0.1:0", client_id: app-extra }
nodes:
  - { name: beat, type: heartbeat, params: { topic: hb, period: 1h } }
`)
	var env *nodes.Env
	var owners []string
	ticks := make(chan timers.Event, 1)
	a := startApp(t, cfg, nil, Options{Extra: func(e *nodes.Env) error {
		env = e
		for _, cb := range e.Executor.Callbacks() {
			owners = append(owners, cb.Owner)
		}
		_, err := e.Executor.NewOwner("extra", nil).Timer(time.Millisecond, func(_ context.Context, ev timers.Event) {
			select {
			case ticks <- ev:
			default:
			}
		})
		return err
	}})
	require.Same(t, a.ex, env.Executor)
	require.Same(t, a.client.Router(), env.Router)
	require.Equal(t, []string{"beat"}, owners, "the config's nodes are built first")
	select {
	case <-ticks:
	case <-time.After(waitBound):
		t.Fatal("the extra timer never ran")
	}

	failing := loadConfig(t, `executor: { workers: 1, timer_source: go }
mqtt: { listen: "127.0.0.1:0", client_id: app-extra-fails }
`)
	boom := errors.New("boom")
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	_, err := Start(ctx, failing, discardLogger(), Options{Extra: func(*nodes.Env) error { return boom }})
	require.ErrorIs(t, err, boom)
}
