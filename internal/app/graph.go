package app

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"time"

	"github.com/robotexec/robotexec/internal/graph"
)

// graphEvery is how often the graph's shape is compared with the one
// published, and the graph published again when it changed (a publisher
// made in a callback).
const graphEvery = 5 * time.Second

// grapher keeps the instance's graph on its graph topic.
type grapher struct {
	a       *App
	started time.Time
	last    []byte
	shape   shape // last's
	stop    chan struct{}
	done    chan struct{}
}

// shape is what the graph is built from that may change while the
// instance runs, in a form that is cheap to compare, so that the graph
// (thousands of nodes, maybe) is built only when it changed: the broker
// named, the number of callbacks and the newest one's ID (IDs only grow,
// so that an addition makes a newer one, and removals alone fewer
// callbacks), and the number of the nodes' publications (a node's only
// grow). A callback's topic, period, options and group never change.
type shape struct {
	broker string
	cbs    int
	newest uint64
	pubs   int
}

// now returns the shape of the graph as it would be built now.
func (g *grapher) now() shape {
	a := g.a
	sh := shape{broker: a.client.Broker()}
	for _, cb := range a.ex.Callbacks() {
		sh.cbs++
		sh.newest = max(sh.newest, cb.ID)
	}
	for _, n := range a.nodes {
		sh.pubs += len(n.Publications())
	}
	return sh
}

// startGraph publishes the graph of a's nodes, and again when it changes.
func (a *App) startGraph(started time.Time) {
	g := &grapher{a: a, started: started, stop: make(chan struct{}), done: make(chan struct{})}
	g.publish()
	go g.watch()
	a.graph = g
}

func (g *grapher) build() []byte {
	a := g.a
	gr := graph.Build(graph.Graph{ClientID: a.cfg.MQTT.ClientID, Version: a.version, Started: g.started,
		Broker: a.client.Broker(), Metrics: a.obs.metricsURL(a.cfg.Metrics.Listen)}, a.nodes, a.ex.Callbacks())
	b, _ := json.Marshal(gr)
	return b
}

// publish publishes the graph when its shape changed.
func (g *grapher) publish() {
	sh := g.now()
	if g.last != nil && sh == g.shape {
		return
	}
	b := g.build()
	g.shape = sh
	if bytes.Equal(b, g.last) {
		return
	}
	g.last = b
	if f := g.a.viewGr; f != nil {
		f.Own(b)
	}
	if err := g.a.client.Keep(graph.Topic(g.a.cfg.MQTT.ClientID), b); err != nil {
		g.a.log.Warn("graph topic: publish", "error", err)
	}
}

func (g *grapher) watch() {
	defer close(g.done)
	t := time.NewTicker(graphEvery)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			g.publish()
		case <-g.a.connects:
			g.publish()
		case <-g.stop:
			return
		}
	}
}

// clear stops watching and clears the retained graph: a clean stop.
func (g *grapher) clear() {
	close(g.stop)
	<-g.done
	if err := g.a.client.Keep(graph.Topic(g.a.cfg.MQTT.ClientID), nil); err != nil {
		g.a.log.Warn("graph topic: clear", "error", err)
	}
}

// metricsURL is the URL of the /metrics that listen serves, "" for none;
// an address without a host (all interfaces) names this host.
func metricsURL(listen string) string {
	if listen == "" {
		return ""
	}
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return ""
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host, _ = os.Hostname()
	}
	return "http://" + net.JoinHostPort(host, port) + "/metrics"
}
