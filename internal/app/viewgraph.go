package app

import (
	"context"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/graph"
	"github.com/robotexec/robotexec/internal/view"
	"github.com/robotexec/robotexec/subscribers"
)

// graphFilter and statusFilter match the graph and status topics of
// every instance.
const (
	graphFilter  = "robotexec/+/graph"
	statusFilter = "robotexec/+/status"
)

// GraphFeed keeps a live view's connection graph: the publishers and
// subscribers of the instances on the broker, from their graph topics,
// leaving out the instances whose status topic says they are offline (an
// instance that died keeps its retained graph; the broker sets its status
// to offline).
type GraphFeed struct {
	set  graph.Set
	view *view.Server
	own  string
}

// FeedGraph subscribes o to the graph topics of every instance on src and
// keeps s's connection graph from them. own, when not empty, is the client
// ID of this process: its graph comes from Own, not from the broker, where
// it may be the one of an earlier run.
func FeedGraph(o *executor.Owner, src subscribers.Source, s *view.Server, own string) (*GraphFeed, error) {
	f := &GraphFeed{view: s, own: own}
	_, err := o.Subscribe(src, graphFilter, func(ctx context.Context, m subscribers.Message) {
		if id, ok := graph.ClientID(m.Topic); ok && id != own {
			f.put(id, m.Payload)
		}
	}, executor.Depth(256), executor.Overflow(subscribers.Block))
	if err != nil {
		return nil, err
	}
	_, err = o.Subscribe(src, statusFilter, func(ctx context.Context, m subscribers.Message) {
		if id, ok := graph.StatusID(m.Topic); ok && id != own && f.set.SetStatus(id, m.Payload) {
			f.show()
		}
	}, executor.Depth(256), executor.Overflow(subscribers.Block))
	if err != nil {
		return nil, err
	}
	return f, nil
}

// Own sets the graph of this process, the payload of its graph topic.
func (f *GraphFeed) Own(payload []byte) { f.put(f.own, payload) }

func (f *GraphFeed) put(id string, payload []byte) {
	if f.set.Put(id, payload) {
		f.show()
	}
}

// show gives the view the connection graph as the set has it.
func (f *GraphFeed) show() {
	pubs, subs := f.set.Endpoints()
	f.view.SetGraph(view.Graph{Publishers: pubs, Subscribers: subs})
}
