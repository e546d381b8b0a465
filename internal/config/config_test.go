package config_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/config"
)

// env returns a lookup function over vars, with HOSTNAME set so that the
// default client ID does not depend on the machine.
func env(vars map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		if name == "HOSTNAME" {
			if v, ok := vars[name]; ok {
				return v, true
			}
			return "robot1", true
		}
		v, ok := vars[name]
		return v, ok
	}
}

func parse(t *testing.T, doc string, vars map[string]string) (*config.Config, error) {
	t.Helper()
	return config.Parse("config.yaml", []byte(doc), env(vars))
}

func mustParse(t *testing.T, doc string, vars map[string]string) *config.Config {
	t.Helper()
	cfg, err := parse(t, doc, vars)
	require.NoError(t, err)
	require.NotNil(t, cfg)
	return cfg
}

// lines returns the text of each error that err joins.
func lines(err error) []string {
	if err == nil {
		return nil
	}
	return strings.Split(err.Error(), "\n")
}

func defaults(file string) config.Config {
	return config.Config{
		File:     file,
		Executor: config.Executor{Workers: 0, QueueDepth: 10, Overflow: "", TimerSource: "precise", InProcess: true, GCHeadroom: 32 << 20, ClockTopic: "clock", DrainTimeout: 10 * time.Second},
		MQTT: config.MQTT{
			Broker:         "embedded",
			Brokers:        config.BrokerList{"embedded"},
			Listen:         "127.0.0.1:1883",
			ClientID:       "robotexec-robot1",
			QoS:            1,
			Protocol:       "5",
			SessionExpiry:  time.Hour,
			KeepAlive:      30 * time.Second,
			MaxPayload:     1 << 20,
			MaxConnections: 1000,
		},
	}
}

func TestDefaults(t *testing.T) {
	for name, doc := range map[string]string{
		"empty":              "",
		"comments only":      "# nothing here\n\n",
		"document marker":    "---\n",
		"null document":      "~\n",
		"no nodes":           "nodes: []\n",
		"null nodes":         "nodes:\n",
		"empty sections":     "executor: {}\nmqtt: {}\nmetrics: {}\n",
		"null sections":      "executor:\nmqtt: ~\nmetrics: null\n",
		"empty strings":      "executor: {overflow: ''}\nmqtt: {broker: '', listen: '', client_id: ''}\n",
		"expanded to empty":  "executor:\n  workers: '${W:-}'\n  queue_depth: ${Q:-}\nmqtt:\n  qos: \"${QOS:-}\"\n  clean_session: ${C}\n  client_id: ${ID:-}\n",
		"trailing empty doc": "nodes: []\n---\n",
	} {
		t.Run(name, func(t *testing.T) {
			cfg := mustParse(t, doc, map[string]string{"C": ""})
			want := defaults("config.yaml")
			require.Equal(t, want.Executor, cfg.Executor)
			require.Equal(t, want.MQTT, cfg.MQTT)
			require.Equal(t, want.Metrics, cfg.Metrics)
			require.Empty(t, cfg.Nodes)
			require.Equal(t, "config.yaml", cfg.File)
		})
	}
}

func TestDefaultClientIDFallsBackToHostname(t *testing.T) {
	host, err := os.Hostname()
	require.NoError(t, err)
	noEnv := func(string) (string, bool) { return "", false }
	cfg, err := config.Parse("c.yaml", nil, noEnv)
	require.NoError(t, err)
	require.Equal(t, "robotexec-"+host, cfg.MQTT.ClientID)

	cfg, err = config.Parse("c.yaml", []byte("mqtt: {client_id: 'id-${HOSTNAME}'}"), noEnv)
	require.NoError(t, err)
	require.Equal(t, "id-"+host, cfg.MQTT.ClientID)
}

func TestFullFile(t *testing.T) {
	t.Setenv("MQTT_USER", "alice")
	t.Setenv("HOSTNAME", "robot7")
	path := filepath.Join("testdata", "full.yaml")
	cfg, err := config.Load(path)
	require.NoError(t, err)

	require.Equal(t, path, cfg.File)
	require.Equal(t, config.Executor{Workers: 4, QueueDepth: 32, Overflow: config.OverflowDropNewest, TimerSource: config.TimerSourceGo, GCHeadroom: 64 << 20, UseSimTime: true, ClockTopic: "sim/clock", DrainTimeout: 3 * time.Second}, cfg.Executor)
	require.Equal(t, config.MQTT{
		Broker:         "ssl://broker.example.com:8883",
		Brokers:        config.BrokerList{"ssl://broker.example.com:8883"},
		Listen:         "0.0.0.0:1884",
		ClientID:       "robotexec-robot7",
		Username:       "alice",
		Password:       "secret",
		QoS:            2,
		Protocol:       "3.1.1",
		CleanSession:   true,
		SessionExpiry:  10 * time.Minute,
		KeepAlive:      10 * time.Second,
		MaxPayload:     512 << 10,
		Linger:         5 * time.Millisecond,
		MaxConnections: 50,
		TLS: &config.TLS{
			CA:   filepath.Join("testdata", "certs", "ca.pem"),
			Cert: filepath.Join("testdata", "certs", "client.pem"),
			Key:  filepath.Join("testdata", "certs", "client.key"),
		},
	}, cfg.MQTT)
	require.Equal(t, config.Metrics{Listen: "127.0.0.1:9090"}, cfg.Metrics)

	require.Len(t, cfg.Nodes, 3)
	type node struct {
		Name, Type, Group string
		Line, Index       int
	}
	var got []node
	for _, n := range cfg.Nodes {
		got = append(got, node{n.Name, n.Type, n.Group, n.Line, n.Index})
	}
	require.Equal(t, []node{
		{"imu_bridge", "bridge", "sensors", 33, 0},
		{"heartbeat-1", "heartbeat", "", 37, 1},
		{"watchdog", "watchdog", "sensors", 42, 2},
	}, got)

	var bridge struct {
		From    string  `yaml:"from"`
		To      string  `yaml:"to"`
		QoS     int     `yaml:"qos"`
		MaxRate float64 `yaml:"max_rate"`
		JSON    bool    `yaml:"json"`
		Retain  bool    `yaml:"retain"`
	}
	require.NoError(t, cfg.Nodes[0].Params.Decode(&bridge))
	require.Equal(t, "sensors/+/raw", bridge.From)
	require.Equal(t, "robot/+/data", bridge.To)
	require.Equal(t, 1, bridge.QoS)
	require.Equal(t, 50.5, bridge.MaxRate)
	require.True(t, bridge.JSON)

	var hb map[string]any
	require.NoError(t, cfg.Nodes[1].Params.Decode(&hb))
	require.Equal(t, map[string]any{"topic": "robot/r1/heartbeat", "period": "500ms"}, hb)

	var wd map[string]string
	require.NoError(t, cfg.Nodes[2].Params.Decode(&wd))
	require.Equal(t, "$SYS/alarm", wd["alarm"])
}

func TestLoadErrors(t *testing.T) {
	_, err := config.Load(filepath.Join(t.TempDir(), "missing.yaml"))
	require.ErrorIs(t, err, fs.ErrNotExist)
	errs := config.Errors(err)
	require.Len(t, errs, 1)
	require.Equal(t, 0, errs[0].Line)
	require.True(t, strings.HasSuffix(err.Error(), "missing.yaml: no such file or directory"), err.Error())

	dir := t.TempDir()
	_, err = config.Load(dir)
	require.Equal(t, dir+": is a directory", err.Error())

	// The TLS files must exist and hold PEM; relative ones are looked for next to the
	// config file.
	path := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ca.pem"), []byte("x"), 0o600))
	require.NoError(t, os.WriteFile(path, []byte(
		"mqtt:\n  broker: mqtts://b:8883\n  tls:\n    ca: ca.pem\n    cert: client.pem\n    key: "+dir+"\n"), 0o600))
	cfg, err := config.Load(path)
	require.NotNil(t, cfg)
	require.Equal(t, filepath.Join(dir, "ca.pem"), cfg.MQTT.TLS.CA)
	require.Equal(t, []string{
		path + ":4: mqtt.tls.ca: " + filepath.Join(dir, "ca.pem") + ": holds no PEM certificate",
		path + ":5: mqtt.tls.cert: " + filepath.Join(dir, "client.pem") + ": no such file or directory",
		path + ":6: mqtt.tls.key: " + dir + ": is a directory",
	}, lines(err))
	require.ErrorIs(t, err, fs.ErrNotExist)
}

func TestTLSPaths(t *testing.T) {
	doc := "mqtt:\n  broker: ssl://b:8883\n  tls: {ca: ca.pem, cert: ./sub/c.pem, key: /abs/c.key}\n"
	for file, dir := range map[string]string{
		"config.yaml":           "",
		"conf/robot.yaml":       "conf",
		"/etc/robotexec/c.yaml": "/etc/robotexec",
	} {
		cfg, err := config.Parse(file, []byte(doc), env(nil))
		require.NoError(t, err)
		require.Equal(t, &config.TLS{
			CA:   filepath.Join(dir, "ca.pem"),
			Cert: filepath.Join(dir, "sub", "c.pem"),
			Key:  "/abs/c.key",
		}, cfg.MQTT.TLS, file)
	}
	cfg, err := config.Parse("c.yaml", []byte("mqtt: {broker: 'wss://b/mqtt', tls: {}}"), env(nil))
	require.NoError(t, err)
	require.Equal(t, &config.TLS{}, cfg.MQTT.TLS)
	cfg, err = config.Parse("c.yaml", []byte("mqtt: {broker: 'wss://b/mqtt', tls: }"), env(nil))
	require.NoError(t, err)
	require.Nil(t, cfg.MQTT.TLS)
}

func TestValidValues(t *testing.T) {
	for _, tc := range []struct {
		doc   string
		check func(*testing.T, *config.Config)
	}{
		{"executor: {workers: 0x10, overflow: block}", func(t *testing.T, c *config.Config) {
			require.Equal(t, 16, c.Executor.Workers)
			require.Equal(t, config.OverflowBlock, c.Executor.Overflow)
		}},
		{"executor: {queue_depth: '5'}", func(t *testing.T, c *config.Config) {
			require.Equal(t, 5, c.Executor.QueueDepth)
		}},
		{"mqtt: {qos: 0, clean_session: yes}", func(t *testing.T, c *config.Config) {
			require.Equal(t, 0, c.MQTT.QoS)
			require.True(t, c.MQTT.CleanSession)
		}},
		{"mqtt: {broker: 'tcp://user:pw@10.0.0.1:1883', listen: ':0'}", func(t *testing.T, c *config.Config) {
			require.Equal(t, "tcp://user:pw@10.0.0.1:1883", c.MQTT.Broker)
			require.Equal(t, ":0", c.MQTT.Listen)
		}},
		{"mqtt: {broker: 'ws://[::1]/mqtt', username: 42}", func(t *testing.T, c *config.Config) {
			require.Equal(t, "ws://[::1]/mqtt", c.MQTT.Broker)
			require.Equal(t, "42", c.MQTT.Username)
		}},
		{"mqtt: {broker: MQTT://h:1}", func(t *testing.T, c *config.Config) {
			require.Equal(t, "MQTT://h:1", c.MQTT.Broker)
		}},
		{"metrics: {listen: '[::1]:9090'}", func(t *testing.T, c *config.Config) {
			require.Equal(t, "[::1]:9090", c.Metrics.Listen)
		}},
		{"defaults: &d {type: bridge, group: g}\nnodes:\n  - {<<: *d, name: a}\n  - <<: *d\n    name: b\n    type: heartbeat\n", nil},
	} {
		t.Run(tc.doc, func(t *testing.T) {
			cfg, err := parse(t, tc.doc, nil)
			if strings.HasPrefix(tc.doc, "defaults:") {
				// An unknown top-level key is an error even when it only
				// holds an anchor.
				require.Equal(t, []string{`config.yaml:1: defaults: unknown key (known keys: executor, mqtt, metrics, view, nodes)`}, lines(err))
				require.Len(t, cfg.Nodes, 2)
				require.Equal(t, []string{"a", "bridge", "g"}, []string{cfg.Nodes[0].Name, cfg.Nodes[0].Type, cfg.Nodes[0].Group})
				require.Equal(t, []string{"b", "heartbeat", "g"}, []string{cfg.Nodes[1].Name, cfg.Nodes[1].Type, cfg.Nodes[1].Group})
				require.Equal(t, 4, cfg.Nodes[1].Line)
				return
			}
			require.NoError(t, err)
			tc.check(t, cfg)
		})
	}
}

func TestErrorText(t *testing.T) {
	for _, tc := range []struct {
		err  config.Error
		want string
	}{
		{config.Error{File: "c.yaml", Line: 3, Field: "mqtt.qos", Msg: "m"}, "c.yaml:3: mqtt.qos: m"},
		{config.Error{File: "c.yaml", Line: 3, Msg: "m"}, "c.yaml:3: m"},
		{config.Error{File: "c.yaml", Msg: "m"}, "c.yaml: m"},
		{config.Error{File: "c.yaml", Field: "f", Msg: "m"}, "c.yaml: f: m"},
		{config.Error{Line: 3, Field: "f", Msg: "m"}, "line 3: f: m"},
		{config.Error{Field: "f", Msg: "m"}, "f: m"},
	} {
		require.Equal(t, tc.want, tc.err.Error())
	}
	cause := errors.New("cause")
	require.ErrorIs(t, &config.Error{Err: cause}, cause)
}

func TestJoin(t *testing.T) {
	a := &config.Error{File: "c.yaml", Line: 9, Msg: "a"}
	b := &config.Error{File: "c.yaml", Line: 2, Msg: "b"}
	c := &config.Error{File: "c.yaml", Line: 2, Msg: "c"}
	other := errors.New("other")
	err := config.Join(errors.Join(a, b), nil, c, other, &config.Error{File: "c.yaml", Line: 9, Msg: "a"})
	require.Equal(t, []string{"other", "c.yaml:2: b", "c.yaml:2: c", "c.yaml:9: a"}, lines(err))
	require.Equal(t, []*config.Error{b, c, a}, config.Errors(err))
	require.NoError(t, config.Join())
	require.NoError(t, config.Join(nil, errors.Join()))
	require.Nil(t, config.Errors(nil))
}

func TestNodeErrorf(t *testing.T) {
	cfg := mustParse(t, `nodes:
  - name: a
    type: bridge
  - name: b

    type: nope
    params:
      period: 5s
      filters:
        - alpha: 0.5
`, nil)
	n := cfg.Nodes[1]
	require.Equal(t, `config.yaml:6: nodes[1].type: unknown node type "nope"`, n.Errorf("type", "unknown node type %q", n.Type).Error())
	require.Equal(t, `config.yaml:4: nodes[1].group: g`, n.Errorf("group", "g").Error())
	require.Equal(t, `config.yaml:4: nodes[1]: whole`, n.Errorf("", "whole").Error())
	require.Equal(t, `config.yaml:8: nodes[1].params.period: p`, n.Errorf("params.period", "p").Error())
	require.Equal(t, `config.yaml:10: nodes[1].params.filters[0].alpha: a`, n.Params.Errorf("filters[0].alpha", "a").Error())
	require.Equal(t, `config.yaml:9: nodes[1].params.filters[3]: f`, n.Params.Errorf("filters[3]", "f").Error())
	require.Equal(t, `config.yaml:7: nodes[1].params: p`, n.Params.Errorf("", "p").Error())
	require.Equal(t, `config.yaml:3: nodes[0].type: t`, cfg.Nodes[0].Errorf("type", "t").Error())
	require.Equal(t, `config.yaml:2: nodes[0].params.x: t`, cfg.Nodes[0].Params.Errorf("x", "t").Error())
	require.Equal(t, `config.yaml:4: nodes[1].name: n`, cfg.Errorf("nodes[1].name", "n").Error())
	require.Equal(t, `config.yaml: mqtt.broker: refused`, cfg.Errorf("mqtt.broker", "refused").Error())
	require.Equal(t, `nodes[0].type: t`, config.Node{}.Errorf("type", "t").Error())
}
