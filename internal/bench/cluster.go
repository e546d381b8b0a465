package bench

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/internal/mqtttest"
)

// The cluster group: the bridge through a two-node ejabberd cluster, and
// the time robotexec's client takes to move to the other node when the
// one it is on is killed.

// errNoEjabberd is what the cluster group says on a machine without
// ejabberd: its rows are not measured, which is not a failure.
var errNoEjabberd = errors.New("install ejabberd")

func (s *suite) cluster() ([]Metric, error) {
	if _, ok := mqtttest.EjabberdPath(); !ok {
		return []Metric{NotMeasured(specBridgeClus, errNoEjabberd.Error()), NotMeasured(specFailover, errNoEjabberd.Error())}, nil
	}
	dir, err := os.MkdirTemp("", "robotexec-bench-ejabberd-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	c, err := mqtttest.StartEjabberd(dir, mqtttest.EjabberdOptions{})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	user, password := c.User("robot")
	urls := make([]string, len(c.Nodes()))
	for i, n := range c.Nodes() {
		u, err := url.Parse(n.URL())
		if err != nil {
			return nil, err
		}
		u.User = url.UserPassword(user, password)
		urls[i] = u.String()
	}
	return []Metric{s.bridgeCluster(urls), s.failover(c, urls)}, nil
}

// bridgeCluster measures the bridge with the producer on node 1 and the
// forwarders and the consumer on node 2.
func (s *suite) bridgeCluster(urls []string) Metric {
	d := s.cfg.slice("cluster") / 3
	m, err := s.bridgeRounds(specBridgeClus, BridgeBroker{URL: urls[1], ProducerURL: urls[0], Persistent: true}, d)
	if err != nil {
		return Failed(specBridgeClus, err)
	}
	m.Note = fmt.Sprintf("the same through two nodes of an ejabberd cluster (mod_mqtt, max_queue 100000): the producer on one node, the forwarders and the consumer on the other, every forwarder with a persistent session, vs %s; %s.",
		m.Note, ejabberdVersion())
	return m
}

// failover kills, once a repetition, the node that a client of both nodes
// (robotexec's, as robotexec run connects: a persistent session, a
// status) is on, and measures the time from the SIGKILL to its connection
// to the other node; the baseline is the time a new client takes to
// connect to that node, measured just before. The killed node is started
// again for the next repetition.
func (s *suite) failover(c *mqtttest.EjabberdCluster, urls []string) Metric {
	connected := make(chan string, 16)
	id := fmt.Sprintf("robotexec-bench-failover-%d", os.Getpid())
	client, err := mqtt.Dial(mqtt.Config{Brokers: urls, ClientID: id, QoS: 1, Logger: discard,
		OnConnect: func(b string) { connected <- b }})
	if err != nil {
		return Failed(specFailover, err)
	}
	defer client.Close()
	var took, base []float64
	for i := range s.cfg.Repeat {
		if err := s.ctx.Err(); err != nil {
			return Failed(specFailover, err)
		}
		on, err := awaitConnect(connected, bridgeWait)
		if err != nil {
			return Failed(specFailover, err)
		}
		from := nodeOf(c, on)
		if from < 0 {
			return Failed(specFailover, fmt.Errorf("connected to %s, not a node of the cluster", on))
		}
		to := 1 - from
		b, err := connectTime(urls[to], fmt.Sprintf("%s-base-%d", id, i))
		if err != nil {
			return Failed(specFailover, err)
		}
		killed := time.Now()
		c.Nodes()[from].Kill()
		at, err := awaitConnect(connected, bridgeWait)
		if err != nil {
			return Failed(specFailover, fmt.Errorf("after the kill of node %d: %w", from+1, err))
		}
		if nodeOf(c, at) != to {
			return Failed(specFailover, fmt.Errorf("after the kill of node %d, connected to %s", from+1, at))
		}
		took = append(took, ms(time.Since(killed)))
		base = append(base, ms(b))
		connected <- at // the next repetition starts on it
		if i < s.cfg.Repeat-1 {
			if err := c.Nodes()[from].Restart(); err != nil {
				return Failed(specFailover, err)
			}
		}
	}
	m := NewMetric(specFailover, took, base)
	m.Note = fmt.Sprintf("a client of both nodes of the ejabberd cluster (mqtt.broker a list; persistent session, QoS 1, a status topic, as robotexec run connects): from the SIGKILL of the node it is on to its connection to the other (a new session there: its subscriptions made again), once a repetition, the killed node started again in between; vs a new client's connection to the other node; %s.",
		ejabberdVersion())
	return m
}

// awaitConnect waits for the next connection that OnConnect reports.
func awaitConnect(connected <-chan string, within time.Duration) (string, error) {
	select {
	case b := <-connected:
		return b, nil
	case <-time.After(within):
		return "", fmt.Errorf("not connected within %v", within)
	}
}

// nodeOf returns the index of the node whose URL is u, or -1.
func nodeOf(c *mqtttest.EjabberdCluster, u string) int {
	for i, n := range c.Nodes() {
		if n.URL() == u {
			return i
		}
	}
	return -1
}

// connectTime returns the time a new clean-session client takes to
// connect to broker.
func connectTime(broker, id string) (time.Duration, error) {
	began := time.Now()
	c, err := mqtt.Dial(mqtt.Config{Broker: broker, ClientID: id, CleanSession: true, StatusTopic: "-", Logger: discard})
	if err != nil {
		return 0, err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), bridgeWait)
	defer cancel()
	if err := c.WaitConnected(ctx); err != nil {
		return 0, err
	}
	return time.Since(began), nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// ejabberdVersion returns the version of Debian's ejabberd package, or
// "ejabberd, version unknown".
func ejabberdVersion() string {
	out, err := exec.Command("dpkg-query", "-W", "-f", "${Version}", "ejabberd").Output()
	if v := strings.TrimSpace(string(out)); err == nil && v != "" {
		return "ejabberd " + v
	}
	return "ejabberd, version unknown"
}
