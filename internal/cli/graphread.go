package cli

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/graph"
	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/subscribers"
)

// graphQuiet is how long the node and topic commands wait, after the last
// retained graph or status arrived, for more.
const graphQuiet = 300 * time.Millisecond

// instance is a robotexec instance on the broker, as its retained graph
// and status topics describe it.
type instance struct {
	graph.Graph
	// Status is the status topic's payload: online, or offline (a clean
	// stop, or the last will of an instance that died).
	Status   string
	hasGraph bool
}

// Stale reports whether the graph describes an instance that did not stop
// cleanly: its status says offline but its graph was never cleared.
func (in *instance) Stale() bool { return in.hasGraph && in.Status == mqtt.StatusOffline }

// instances gathers the retained graphs and statuses.
type instances struct {
	mu   sync.Mutex
	byID map[string]*instance
	last atomic.Int64 // when the last one arrived, unix nanoseconds
}

func (is *instances) add(_ context.Context, m subscribers.Message) {
	is.last.Store(time.Now().UnixNano())
	parts := strings.Split(m.Topic, "/")
	if len(parts) != 3 {
		return
	}
	is.mu.Lock()
	defer is.mu.Unlock()
	in := is.byID[parts[1]]
	if in == nil {
		in = &instance{Graph: graph.Graph{ClientID: parts[1]}}
		is.byID[parts[1]] = in
	}
	switch parts[2] {
	default:
		return
	case "status":
		in.Status = string(m.Payload)
	case "graph":
		var g graph.Graph
		if len(m.Payload) == 0 || json.Unmarshal(m.Payload, &g) != nil {
			in.hasGraph, in.Graph = false, graph.Graph{ClientID: parts[1]}
			return
		}
		g.ClientID = parts[1]
		in.Graph, in.hasGraph = g, true
	}
}

// readInstances returns the instances on c's broker that have a graph or
// say they are online, sorted by client ID: it subscribes to every graph
// and status topic, asks the instances to describe themselves, and waits
// until graphQuiet passes without a message.
func readInstances(ctx context.Context, c *mqtt.Client) ([]*instance, error) {
	is := &instances{byID: map[string]*instance{}}
	is.last.Store(time.Now().UnixNano())
	ex := executor.New(executor.Options{Workers: 1, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	owner := ex.NewOwner("graph", nil)
	// One filter for the graphs and the statuses (and the fences, which
	// add ignores).
	if _, err := owner.Subscribe(c, "robotexec/+/+", is.add, executor.Depth(1<<14), executor.Overflow(subscribers.Block)); err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- ex.Run(runCtx) }()
	// The instances answer with their graph and status, which the nodes
	// of a cluster may not share as retained messages. The retained ones
	// are enough elsewhere: a user who may not publish the request still
	// lists the instances.
	_ = c.PublishWait(ctx, subscribers.Message{Topic: mqtt.DefaultDescribeTopic, Payload: []byte("graph")})
	for ctx.Err() == nil && time.Since(time.Unix(0, is.last.Load())) < graphQuiet {
		time.Sleep(graphQuiet / 6)
	}
	cancel()
	if err := <-done; err != nil {
		return nil, err
	}
	var out []*instance
	for _, in := range is.byID {
		if in.hasGraph || in.Status == mqtt.StatusOnline {
			out = append(out, in)
		}
	}
	slices.SortFunc(out, func(a, b *instance) int { return strings.Compare(a.ClientID, b.ClientID) })
	return out, ctx.Err()
}

// state is an instance's state as the commands print it.
func (in *instance) state() string {
	switch {
	case in.Stale():
		return "offline (stale graph)"
	case in.Status == "":
		return "unknown"
	}
	return in.Status
}
