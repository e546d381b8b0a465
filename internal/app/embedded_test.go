package app

// Tests of the embedded broker's users (mqtt.users), from outside with
// paho clients under each user's credentials.

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/graph"
	"github.com/robotexec/robotexec/internal/mqtt"
)

const usersConfig = `executor: { workers: 2, timer_source: go, in_process: %t }
mqtt:
  listen: "127.0.0.1:0"
  client_id: %s
  username: robot
  password: r0b0t
  qos: 1
  users:
    - { username: robot, password: r0b0t, read: ['#'], write: ['robot/#'] }
    - { username: viewer, password: v1ew, read: ['robot/status/#'] }
    - { username: operator, password: 0per, read: ['robot/out/#'], write: ['robot/in/#'] }
nodes:
  - { name: beat, type: heartbeat, params: { topic: robot/status/beat, period: 20ms } }
  - { name: relay, type: bridge, params: { from: robot/in/#, to: robot/out/# } }
  - { name: stray, type: heartbeat, params: { topic: elsewhere/beat, period: 20ms } }
`

// TestEmbeddedBrokerUsers: anonymous clients and wrong passwords are
// refused; a user reads only its read filters, even subscribing to '#';
// what the operator may write goes through the relay to what it may read;
// the app's own client, as user robot, publishes nothing outside robot's
// write filters (the stray heartbeat) but does keep its graph topic, and
// stays connected.
func TestEmbeddedBrokerUsers(t *testing.T) {
	t.Parallel()
	for _, inProcess := range []bool{true, false} {
		t.Run(fmt.Sprintf("in_process=%t", inProcess), func(t *testing.T) {
			t.Parallel()
			id := fmt.Sprintf("app-users-%t", inProcess)
			a := startApp(t, loadConfig(t, fmt.Sprintf(usersConfig, inProcess, id)), nil, Options{})
			url := a.broker.URL()

			_, err := dialPaho(t, url, id+"-anonymous", "", "")
			require.Error(t, err, "an anonymous client")
			_, err = dialPaho(t, url, id+"-wrong", "viewer", "wrong")
			require.Error(t, err, "a wrong password")

			// The app's own topics, as robot may read them. (Until the
			// broker holds them, a '#' subscription would race their
			// storing: mochi v2.7.9 reads its index unlocked for a
			// filter with wildcards.)
			robot, err := dialPaho(t, url, id+"-robot", "robot", "r0b0t")
			require.NoError(t, err)
			status := fmt.Sprintf(mqtt.DefaultStatusTopic, id)
			robot.subscribe(t, status)
			robot.subscribe(t, graph.Topic(id))
			robot.await(t, "the app's status", 1, func(m mqttMsg) bool { return m.topic == status && m.payload == mqtt.StatusOnline })
			robot.await(t, "the app's graph", 1, onTopic(graph.Topic(id)))
			robot.subscribe(t, "#")

			viewer, err := dialPaho(t, url, id+"-viewer", "viewer", "v1ew")
			require.NoError(t, err)
			viewer.subscribe(t, "#")
			operator, err := dialPaho(t, url, id+"-operator", "operator", "0per")
			require.NoError(t, err)
			operator.subscribe(t, "robot/out/#")

			operator.publish(t, "robot/in/go", "ahead", false)
			got := operator.await(t, "the relay's output", 1, onTopic("robot/out/go"))
			require.Equal(t, "ahead", got[0].payload)

			robot.await(t, "20 beats", 20, onTopic("robot/status/beat"))
			viewer.await(t, "20 beats", 20, onTopic("robot/status/beat"))
			// Both have seen 20 beats of a 20 ms timer by now, as many
			// chances for a stray one.
			require.Empty(t, robot.received(func(m mqttMsg) bool { return strings.HasPrefix(m.topic, "elsewhere/") }),
				"publications outside robot's write filters")
			require.Empty(t, viewer.received(func(m mqttMsg) bool { return !strings.HasPrefix(m.topic, "robot/status/") }),
				"messages outside the viewer's read filters")
			require.True(t, a.client.Connected(), "the app's client stays connected")
			require.NoError(t, shutdownWithin(t, a))
		})
	}
}
