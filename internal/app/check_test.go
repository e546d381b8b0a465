package app

// Tests of the full check of a config file (robotexec validate): what
// config.Load cannot see, every problem at its line, in file order.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/config"
)

const badConfig = `mqtt:
  allow_anonymous: true
  users:
    - { username: a, password: b, read: ['a/#/b'], write: ['$share/g/x'] }
nodes:
  - name: lidar
    type: lidar
  - name: beat
    type: heartbeat
    params: { topic: hb, period: fast }
  - name: silent
    type: heartbeat
    params: { period: 1s }
  - type: heartbeat
    params: { topic: x, period: 1s }
  - name: bad_topic
    type: watchdog
    params: { watch: "robot/#/data", timeout: 1s, alarm: robot/alarm }
  - name: fine
    type: heartbeat
    params: { topic: hb, period: 1s }
`

// TestLoadAndCheck: every problem of a config, config.Load's and the
// node types' and params', each at its line, in file order; a good
// config passes.
func TestLoadAndCheck(t *testing.T) {
	t.Parallel()
	path := writeConfig(t, badConfig)
	cfg, err := LoadAndCheck(path)
	require.Nil(t, cfg)
	want := []string{
		`:4: mqtt.users[0].read[0]: topic filter "a/#/b": '#' must be the last level`,
		`:4: mqtt.users[0].write[0]: "$share/g/x": name the topics; access to them covers shared subscriptions too`,
		`:7: nodes[0].type: unknown node type "lidar" (known: ` + strings.Join(TypeNames(), ", ") + `)`,
		`:10: nodes[1].params.period: "fast" is not a duration`,
		`:11: nodes[2]: silent (heartbeat): topic is required`,
		`:14: nodes[3].name: required`,
		`:16: nodes[4]: bad_topic (watchdog): executor: bad_topic: subscribers: topic filter "robot/#/data": '#' must be the last level`,
	}
	for i := range want {
		want[i] = path + want[i]
	}
	require.Equal(t, want, strings.Split(err.Error(), "\n"))
	require.Len(t, config.Errors(err), len(want), "one config.Error each")

	good, err := LoadAndCheck(writeConfig(t, "nodes:\n  - { name: fine, type: heartbeat, params: { topic: hb, period: 1s } }\n"))
	require.NoError(t, err)
	require.Len(t, good.Nodes, 1)
}

// TestLoadAndCheckUnreadable: a file that is missing or not YAML gives no
// config, only the error.
func TestLoadAndCheckUnreadable(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "none.yaml")
	cfg, err := LoadAndCheck(missing)
	require.Nil(t, cfg)
	require.ErrorIs(t, err, os.ErrNotExist)
	require.ErrorContains(t, err, missing)

	malformed := writeConfig(t, "nodes: [ { name: x\n")
	cfg, err = LoadAndCheck(malformed)
	require.Nil(t, cfg)
	require.ErrorContains(t, err, malformed+":")
	require.ErrorContains(t, err, "invalid YAML")
}

// TestCheckParseError: Check reports the parse error it is given with its
// own problems, in file order.
func TestCheckParseError(t *testing.T) {
	t.Parallel()
	path := writeConfig(t, "executor: { workerz: 2 }\nnodes:\n  - { name: a, type: lidar }\n")
	cfg, err := config.Load(path)
	require.NotNil(t, cfg)
	require.Error(t, err)
	got := strings.Split(Check(cfg, err).Error(), "\n")
	require.Len(t, got, 2)
	require.True(t, strings.HasPrefix(got[0], path+`:1: executor.workerz: unknown key`), got[0])
	require.True(t, strings.HasPrefix(got[1], path+`:3: nodes[0].type: unknown node type "lidar"`), got[1])
}

// TestViewUserFilters: the topic filters of view.users are checked as
// those of mqtt.users are.
func TestViewUserFilters(t *testing.T) {
	t.Parallel()
	path := writeConfig(t, "view:\n  listen: 127.0.0.1:0\n  users:\n    - { username: a, password: b, read: ['a/#/b'], write: ['$share/g/x'] }\n")
	_, err := LoadAndCheck(path)
	require.Equal(t, []string{
		path + `:4: view.users[0].read[0]: topic filter "a/#/b": '#' must be the last level`,
		path + `:4: view.users[0].write[0]: "$share/g/x": name the topics; access to them covers shared subscriptions too`,
	}, strings.Split(err.Error(), "\n"))
}
