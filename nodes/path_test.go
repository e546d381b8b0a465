package nodes_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/trace"
	"github.com/robotexec/robotexec/internal/tracecheck"
	"github.com/robotexec/robotexec/nodes"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

// relayType is a node type that passes each message of its input on to its
// output; the last stage of a chain signals done instead.
func relayType(done chan<- struct{}) string {
	return register(func(n *nodes.Node) error {
		var p struct {
			In  string `yaml:"in"`
			Out string `yaml:"out"`
		}
		if err := n.Params(&p); err != nil {
			return err
		}
		var out *subscribers.Publisher
		if p.Out != "" {
			out = n.Publisher(p.Out)
		}
		n.Subscribe(p.In, func(ctx context.Context, m subscribers.Message) {
			if out == nil {
				done <- struct{}{}
				return
			}
			_ = out.Publish(ctx, m.Payload)
		})
		return nil
	})
}

// TestNodesHandOff sends messages one at a time through five relay nodes on
// an otherwise idle executor: a node's publication to the next node's
// dormant subscription wakes no other worker (the hand-off of
// docs/design.md, Idle workers and hand-off): the publishing worker runs the
// next stage itself, so the only wake-up per message is the one for the
// message entering the chain from outside, and the recorded trace shows each
// message's five runs on one worker.
func TestNodesHandOff(t *testing.T) {
	const messages = 100
	done := make(chan struct{}, 1)
	typ := relayType(done)
	rec := &tracecheck.Recorder{}
	ex := executor.New(observed(executor.Options{Workers: 4, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, rec))
	router := new(subscribers.Router)
	env := &nodes.Env{Executor: ex, Router: router, QoS: 1}
	for i := range 5 {
		out := ""
		if i < 4 {
			out = fmt.Sprintf("out: stage/%d", i+1)
		}
		_, err := nodes.Build(context.Background(), env, nodes.Spec{Name: fmt.Sprint("relay", i), Type: typ,
			Params: params(t, fmt.Sprintf("in: stage/%d\n%s", i, out))})
		require.NoError(t, err)
	}
	ctx, cancel := contextWithCancel()
	stopped := make(chan error, 1)
	go func() { stopped <- ex.Run(ctx) }()
	send := func() {
		deadline := time.Now().Add(10 * time.Second)
		for ex.Stats().Parked < 4 && time.Now().Before(deadline) {
			time.Sleep(50 * time.Microsecond)
		}
		_, err := router.Publish(context.Background(), subscribers.Message{Topic: "stage/0", Payload: []byte("x")})
		require.NoError(t, err)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("pipeline stalled")
		}
	}
	for range 5 { // warm up: every worker parked
		send()
	}
	before := ex.Stats().Wakeups
	for range messages {
		send()
	}
	require.Equal(t, uint64(messages), ex.Stats().Wakeups-before)
	cancel()
	require.NoError(t, <-stopped)
	steps := rec.Steps()
	require.NoError(t, tracecheck.Check(steps, tracecheck.Model{Workers: 4, Drained: true, Batch: executor.DefaultBatch}))
	var workers []int // of each message's runs, stage by stage
	for _, s := range steps {
		if s.Op == trace.Start {
			workers = append(workers, s.Worker)
		}
	}
	require.Len(t, workers, 5*(messages+5))
	for m := range messages + 5 {
		run := workers[5*m : 5*m+5]
		for _, w := range run {
			require.Equal(t, run[0], w, "message %d's runs on workers %v", m, run)
		}
	}
}

// muteCount counts the mutes of an executor.
type muteCount struct{ n chan struct{} }

func (m muteCount) Observe(ev trace.Event) {
	if ev.Op == trace.Mute {
		select {
		case m.n <- struct{}{}:
		default:
		}
	}
}

// TestNodesMuteBlockedPublisher has a node publish from a timer into a
// full local subscription with the block policy: the publishing callback
// is muted until the queue drains (docs/design.md, Resources: muting),
// and nothing is dropped.
func TestNodesMuteBlockedPublisher(t *testing.T) {
	mutes := muteCount{n: make(chan struct{}, 1)}
	ex := executor.New(observed(executor.Options{Workers: 2, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, mutes))
	router := new(subscribers.Router)
	env := &nodes.Env{Executor: ex, Router: router, Depth: 4, Overflow: ptr(subscribers.Block)}
	got := make(chan int, 1000)
	producer := register(func(n *nodes.Node) error {
		out := n.Publisher("work")
		i := 0
		n.Timer(100*time.Microsecond, func(ctx context.Context, _ timers.Event) {
			if i < 300 {
				i++
				_ = out.Publish(ctx, []byte(fmt.Sprint(i)))
			}
		})
		return nil
	})
	consumer := register(func(n *nodes.Node) error {
		var sub *subscribers.Subscription
		sub = nodes.Subscribe(n, "work", func(ctx context.Context, i int) {
			time.Sleep(500 * time.Microsecond)
			if l := sub.Len(); l > 5 {
				t.Errorf("queue of %d, over its depth of 4 and one publication", l)
			}
			got <- i
		})
		return nil
	})
	for name, typ := range map[string]string{"producer": producer, "consumer": consumer} {
		_, err := nodes.Build(context.Background(), env, nodes.Spec{Name: name, Type: typ})
		require.NoError(t, err)
	}
	ctx, cancel := contextWithCancel()
	stopped := make(chan error, 1)
	go func() { stopped <- ex.Run(ctx) }()
	for want := 1; want <= 300; want++ {
		select {
		case i := <-got:
			require.Equal(t, want, i, "every message, in order")
		case <-time.After(10 * time.Second):
			t.Fatalf("message %d did not come", want)
		}
	}
	select {
	case <-mutes.n:
	default:
		t.Fatal("the producer was never muted")
	}
	cancel()
	require.NoError(t, <-stopped)
}

func ptr[T any](v T) *T { return &v }

// observed returns opts with obs told of every scheduling step.
func observed(opts executor.Options, obs trace.Observer) executor.Options {
	opts.Observer = obs
	return opts
}
