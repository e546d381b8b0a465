package robotexec_test

// End-to-end tests of the embedded broker's users: robotexec run with
// mqtt.users on a network listen address, used from outside with robotexec
// pub and echo under each user's credentials.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const usersConfig = `executor: { workers: 2 }
mqtt:
  listen: 0.0.0.0:%d
  client_id: robotexec-users-test
  username: robot
  password: ${ROBOT_PASSWORD}
  qos: 1
  users:
    - { username: robot, password: '${ROBOT_PASSWORD}', read: ['#'], write: ['robot/#'] }
    - { username: viewer, password: v1ew, read: ['robot/status/#'] }
    - { username: operator, password: 0per, read: ['robot/out/#'], write: ['robot/in/#'] }
nodes:
  - { name: beat, type: heartbeat, params: { topic: robot/status/beat, period: 50ms } }
  - { name: secret, type: heartbeat, params: { topic: robot/secret, period: 50ms } }
  - { name: relay, type: bridge, params: { from: robot/in/#, to: robot/out/# } }
  - { name: stray, type: heartbeat, params: { topic: elsewhere/beat, period: 50ms } }
`

// TestEmbeddedBrokerUsers: a wrong password and an anonymous client are
// refused; a user reads only its read filters, even subscribing to '#';
// a publication outside a user's write filters is refused (pub exits 1)
// and reaches nobody; inside them it goes through the nodes. robotexec's
// own client, as user robot, does not publish outside robot's write
// filters, so the broker has no reason to disconnect it.
func TestEmbeddedBrokerUsers(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	url := brokerURL(port)
	path := filepath.Join(t.TempDir(), "config.yaml")
	writeFile(t, path, fmt.Sprintf(usersConfig, port))
	env := []string{"ROBOT_PASSWORD=r0b0t"}
	run := startProc(t, robotexecBin, env, "run", path)
	run.stderr.waitFor(t, startup, "robotexec running")

	as := func(user, password string, args ...string) []string {
		return append([]string{args[0], "-broker", url, "-timeout", "3s", "-username", user, "-password", password}, args[1:]...)
	}
	viewer := startProc(t, robotexecBin, nil, as("viewer", "v1ew", "echo", "-qos", "1", "#")...)
	viewer.stdout.waitFor(t, traffic, "robot/status/beat ")
	operator := startProc(t, robotexecBin, nil, as("operator", "0per", "echo", "-qos", "1", "robot/out/#")...)

	for _, tc := range []struct {
		name   string
		args   []string
		stderr string
	}{
		{"wrong password", as("viewer", "wrong", "echo", "robot/status/#"), "refused the credentials"},
		{"anonymous", []string{"pub", "-broker", url, "-timeout", "3s", "robot/in/x", "anon"}, "refused the credentials"},
		{"unknown user", as("mallory", "v1ew", "pub", "robot/in/x", "mallory"), "refused the credentials"},
		{"read outside", as("viewer", "v1ew", "echo", "robot/secret"), "the broker refused: not authorized"},
		// pub publishes at QoS 1 by default and names the broker's reason.
		{"write outside", as("operator", "0per", "pub", "robot/status/beat", "forged"), "the broker refused: not authorized (0x87)"},
	} {
		r := runCmd(t, quickExit, robotexecBin, nil, tc.args...)
		require.Equal(t, 1, r.code, "%s: %s", tc.name, r)
		require.Contains(t, r.stderr, tc.stderr, "%s: %s", tc.name, r)
	}
	// MQTT 3.1.1 cannot say why: the broker acknowledges and drops it, as
	// mosquitto does, and keeps the connection.
	r311 := runCmd(t, quickExit, robotexecBin, nil, as("operator", "0per", "pub", "-protocol", "3.1.1", "robot/status/beat", "forged")...)
	require.Equal(t, 0, r311.code, "%s", r311)

	// Inside the operator's write filters: the relay forwards it to
	// robot/out, which the operator reads.
	deadline := time.Now().Add(traffic)
	for {
		r := runCmd(t, quickExit, robotexecBin, nil, as("operator", "0per", "pub", "-qos", "1", "robot/in/go", "ahead")...)
		require.Equal(t, 0, r.code, "%s", r)
		if _, ok := operator.stdout.find(func(l string) bool { return l == "robot/out/go ahead" }); ok {
			break
		}
		require.True(t, time.Now().Before(deadline), "the relay's output never reached the operator")
		time.Sleep(100 * time.Millisecond)
	}

	// 30 messages at 20 Hz from each of beat and secret: none from stray,
	// which publishes as often, outside robot's write filters.
	r := runCmd(t, quickExit, robotexecBin, nil, as("robot", "r0b0t", "echo", "-n", "30", "#")...)
	require.Equal(t, 0, r.code, "%s", r)
	require.Len(t, lines(r.stdout), 30)
	require.NotRegexp(t, `(?m)^elsewhere/`, r.stdout, "%s", r)
	require.Contains(t, r.stdout, "robot/secret ", "%s", r)

	viewer.signal(t, os.Interrupt)
	require.Equal(t, 0, viewer.wait(t, quickExit))
	seen := viewer.stdout.all()
	require.NotEmpty(t, seen)
	for _, l := range seen {
		require.True(t, strings.HasPrefix(l, "robot/status/beat "), "the viewer read %q", l)
		require.NotContains(t, l, "forged")
	}
	run.signal(t, os.Interrupt)
	require.Equal(t, 0, run.wait(t, quickExit), "%s", run)
	_, lost := run.stderr.find(func(l string) bool { return strings.Contains(l, "connection lost") })
	require.False(t, lost, "robotexec's own client was disconnected: %s", run)
}

// TestValidateOpenBroker: an embedded broker on a network address with no
// users is a config error with its line unless allow_anonymous is true; so
// is a malformed filter of a user.
func TestValidateOpenBroker(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		name, config, want string
		code               int
	}{
		{"open", "mqtt:\n  listen: 0.0.0.0:1883\n", `open.yaml:2: mqtt.listen: "0.0.0.0:1883" is reachable from the network`, 2},
		{"anonymous", "mqtt:\n  listen: 0.0.0.0:1883\n  allow_anonymous: true\n", "anonymous.yaml: valid, 0 nodes", 0},
		{"filter", "mqtt:\n  allow_anonymous: true\n  users:\n    - { username: a, password: b, read: ['a/#/b'] }\n",
			`filter.yaml:4: mqtt.users[0].read[0]: topic filter "a/#/b": '#' must be the last level`, 2},
	} {
		path := filepath.Join(dir, tc.name+".yaml")
		writeFile(t, path, tc.config)
		r := runCmd(t, quickExit, robotexecBin, nil, "validate", path)
		require.Equal(t, tc.code, r.code, "%s", r)
		require.Contains(t, r.stdout+r.stderr, tc.want, "%s", r)
	}
}
