package mqtttest_test

import (
	"fmt"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/mqtttest"
	"github.com/robotexec/robotexec/internal/testenv"
)

// A cluster of two ejabberd nodes routes a message published on one node
// to a subscriber on the other; each node can be killed, stopped and
// started again, and the cluster routes again once it is back.
func TestEjabberdCluster(t *testing.T) {
	began := time.Now()
	c := mqtttest.Ejabberd(t, mqtttest.EjabberdOptions{})
	t.Logf("a 2-node cluster started in %v", time.Since(began).Round(time.Millisecond))
	nodes := c.Nodes()
	require.Len(t, nodes, 2)
	require.Equal(t, []string{nodes[0].URL(), nodes[1].URL()}, c.URLs())
	require.NotEqual(t, nodes[0].Addr(), nodes[1].Addr())

	// crosses publishes on node from and waits until the subscriber on
	// node to has it.
	crosses := func(from, to *mqtttest.EjabberdNode, payload string) {
		t.Helper()
		got := make(chan string, 10)
		sub := clusterClient(t, c, to, "sub")
		tok := sub.Subscribe("cluster/test", 1, func(_ paho.Client, m paho.Message) { got <- string(m.Payload()) })
		require.True(t, tok.WaitTimeout(20*time.Second) && tok.Error() == nil, "subscribe: %v", tok.Error())
		pub := clusterClient(t, c, from, "pub")
		deadline := time.After(20 * time.Second)
		for {
			// A subscription made on one node reaches the other through
			// the cluster's database a moment later: publish again until
			// it arrives.
			tok := pub.Publish("cluster/test", 1, false, payload)
			require.True(t, tok.WaitTimeout(20*time.Second) && tok.Error() == nil, "publish: %v", tok.Error())
			select {
			case p := <-got:
				require.Equal(t, payload, p)
				sub.Disconnect(0)
				pub.Disconnect(0)
				return
			case <-time.After(200 * time.Millisecond):
			case <-deadline:
				t.Fatalf("%s did not reach %s within 20s\n%s\n%s", payload, to.Node(), nodes[0].Log(), nodes[1].Log())
			}
		}
	}
	crosses(nodes[0], nodes[1], "one")
	crosses(nodes[1], nodes[0], "two")

	pid := nodes[0].PID()
	require.Positive(t, pid)
	nodes[0].Kill()
	require.Zero(t, nodes[0].PID())
	began = time.Now()
	nodes[0].Start()
	t.Logf("a killed node was back in the cluster %v after its start", time.Since(began).Round(time.Millisecond))
	require.NotEqual(t, pid, nodes[0].PID())
	crosses(nodes[1], nodes[0], "after kill")

	began = time.Now()
	nodes[1].Stop()
	t.Logf("a node stopped in %v", time.Since(began).Round(time.Millisecond))
	require.Zero(t, nodes[1].PID())
	nodes[1].Start()
	crosses(nodes[0], nodes[1], "after stop")
}

var clusterClients int

// clusterClient connects an MQTT 3.1.1 client to node as the cluster's
// user.
func clusterClient(t *testing.T, c *mqtttest.EjabberdCluster, node *mqtttest.EjabberdNode, role string) paho.Client {
	t.Helper()
	clusterClients++
	user, password := c.User("robot")
	o := paho.NewClientOptions().AddBroker(node.URL()).SetClientID(fmt.Sprintf("%s-%d", role, clusterClients)).
		SetUsername(user).SetPassword(password).SetProtocolVersion(4).SetCleanSession(true)
	cl := paho.NewClient(o)
	tok := cl.Connect()
	require.True(t, tok.WaitTimeout(20*time.Second) && tok.Error() == nil, "connect to %s: %v", node.URL(), tok.Error())
	t.Cleanup(func() { cl.Disconnect(0) })
	return cl
}

// Without ejabberd its tests skip naming the install, and fail instead
// under ROBOTEXEC_TEST_ALL=1.
func TestMissingEjabberd(t *testing.T) {
	t.Setenv(testenv.AllVar, "")
	var skipped fakeTB
	mqtttest.MissingEjabberd(&skipped)
	require.Contains(t, skipped.skip, "install it with `apt-get install -y ejabberd`")

	t.Setenv(testenv.AllVar, "1")
	var failed fakeTB
	mqtttest.MissingEjabberd(&failed)
	require.Contains(t, failed.fatal, "install it with `apt-get install -y ejabberd`")
}
