package nodes_test

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/trace"
	"github.com/robotexec/robotexec/nodes"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// mutedEntities sends the IDs of the entities muted.
type mutedEntities chan uint64

func (m mutedEntities) Observe(ev trace.Event) {
	if ev.Op == trace.Mute {
		select {
		case m <- ev.ID:
		default:
		}
	}
}

// TestMuteGoesToTheCallbackNotThePublishersNode: node a's timer publishes
// into a full block queue through node b's publisher, with its own
// context. The publication is a's callback's: a's timer is muted, and b,
// whose timer publishes nothing, keeps its rate.
func TestMuteGoesToTheCallbackNotThePublishersNode(t *testing.T) {
	muted := make(mutedEntities, 1024)
	ex := executor.New(observed(executor.Options{Workers: 3, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, muted))
	router := new(subscribers.Router)
	env := &nodes.Env{Executor: ex, Router: router, Depth: 1, Overflow: ptr(subscribers.Block)}
	release := make(chan struct{})
	var first atomic.Bool
	consumer := register(func(n *nodes.Node) error {
		n.Subscribe("work", func(context.Context, subscribers.Message) {
			if first.CompareAndSwap(false, true) {
				<-release
			}
		})
		return nil
	})
	var bsPublisher *subscribers.Publisher
	var bRuns atomic.Int64
	b := register(func(n *nodes.Node) error {
		bsPublisher = n.Publisher("work")
		n.Timer(time.Millisecond, func(context.Context, timers.Event) {
			bRuns.Add(1)
			time.Sleep(200 * time.Microsecond)
		})
		return nil
	})
	var aTimer *timers.Timer
	a := register(func(n *nodes.Node) error {
		aTimer = n.Timer(2*time.Millisecond, func(ctx context.Context, _ timers.Event) {
			assert.NoError(t, bsPublisher.Publish(ctx, nil))
			time.Sleep(time.Millisecond)
		})
		return nil
	})
	for _, spec := range []nodes.Spec{{Name: "consumer", Type: consumer}, {Name: "b", Type: b}, {Name: "a", Type: a}} {
		_, err := nodes.Build(context.Background(), env, spec)
		require.NoError(t, err)
	}
	ctx, cancel := contextWithCancel()
	stopped := make(chan error, 1)
	go func() { stopped <- ex.Run(ctx) }()
	select {
	case id := <-muted:
		require.Equal(t, aTimer.ID(), id, "a's timer, whose context published, is muted")
	case <-time.After(20 * time.Second):
		t.Fatal("no mute")
	}
	before := bRuns.Load()
	time.Sleep(300 * time.Millisecond)
	ran := bRuns.Load() - before
	close(release)
	cancel()
	require.NoError(t, <-stopped)
	require.GreaterOrEqual(t, ran, int64(100), "b's timer kept its rate (1 kHz)")
	for len(muted) > 0 {
		require.Equal(t, aTimer.ID(), <-muted, "every mute is a's timer's")
	}
}
