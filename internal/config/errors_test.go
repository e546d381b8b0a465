package config_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/config"
)

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		doc  string
		want []string
	}{
		// Malformed YAML: the parser's line, and no config.
		{"bad indentation", "mqtt:\n  qos: 1\n   broker: x\n",
			[]string{"config.yaml:3: invalid YAML: mapping values are not allowed in this context"}},
		{"tab", "mqtt:\n\tqos: 1\n",
			[]string{"config.yaml:2: invalid YAML: found character that cannot start any token"}},
		{"unclosed flow", "nodes: [\n",
			[]string{"config.yaml:2: invalid YAML: did not find expected node content"}},
		{"unclosed flow sequence", "x: 1\ny: 2\nz: [1, 2\nw: 3\n",
			[]string{"config.yaml:3: invalid YAML: did not find expected ',' or ']'"}},
		{"bad block sequence", "nodes:\n  - name: a\n   type: b\n",
			[]string{"config.yaml:2: invalid YAML: did not find expected '-' indicator"}},
		{"bad block mapping", "a:\n  b: 1\n c: 2\n",
			[]string{"config.yaml:3: invalid YAML: did not find expected key"}},
		{"error on line 1", "a: b: c\n",
			[]string{"config.yaml:1: invalid YAML: mapping values are not allowed in this context"}},
		{"unknown anchor", "executor: {}\nmqtt: *nope\n",
			[]string{"config.yaml:2: invalid YAML: unknown anchor 'nope' referenced"}},
		{"control character", "mqtt:\n  broker: a\x01\n",
			[]string{"config.yaml:2: invalid YAML: control characters are not allowed"}},
		{"bad UTF-8", "nodes: []\n# \xff\n",
			[]string{"config.yaml:2: invalid YAML: invalid leading UTF-8 octet"}},
		{"bad second document", "nodes: []\n---\n[\n",
			[]string{"config.yaml:4: invalid YAML: did not find expected node content"}},

		// The document.
		{"list document", "- a\n- b\n",
			[]string{`config.yaml:1: the document must be a mapping, not a list`}},
		{"scalar document", "hello\n",
			[]string{`config.yaml:1: the document must be a mapping, not "hello"`}},
		{"second document", "nodes: []\n---\nnodes: []\n",
			[]string{`config.yaml:2: unexpected second YAML document (a config file holds one)`}},

		// Unknown and duplicate keys.
		{"unknown top-level key", "executor: {}\nmetric:\n  listen: :9090\n",
			[]string{`config.yaml:2: metric: unknown key; did you mean "metrics"?`}},
		{"unknown nested key", "executor:\n  workers: 2\n  wokers: 3\n  depth: 1\n",
			[]string{
				`config.yaml:3: executor.wokers: unknown key; did you mean "workers"?`,
				`config.yaml:4: executor.depth: unknown key (known keys: workers, priority_workers, realtime, pin_workers, reserve_for_timers, procs, queue_depth, overflow, timer_source, in_process, gc_headroom, use_sim_time, clock_topic, drain_timeout)`,
			}},
		{"unknown key in tls", "mqtt:\n  broker: ssl://h:1\n  tls:\n    CA: x\n",
			[]string{`config.yaml:4: mqtt.tls.CA: unknown key; did you mean "ca"?`}},
		{"unknown key in node", "nodes:\n  - name: a\n    type: t\n    parms: {}\n",
			[]string{`config.yaml:4: nodes[0].parms: unknown key; did you mean "params"?`}},
		{"duplicate key", "mqtt:\n  qos: 1\n  qos: 2\n",
			[]string{`config.yaml:3: mqtt.qos: duplicate key (first at line 2)`}},
		{"list key", "? [a]\n: 1\n",
			[]string{`config.yaml:1: a list is not a valid key`}},

		// Wrong kinds.
		{"not an integer", "executor:\n  workers: four\n  queue_depth: 1.5\n",
			[]string{
				`config.yaml:2: executor.workers: "four" is not an integer`,
				`config.yaml:3: executor.queue_depth: "1.5" is not an integer`,
			}},
		{"integer out of range", "executor: {workers: 99999999999999999999}\n",
			[]string{`config.yaml:1: executor.workers: "99999999999999999999" is out of range (-9223372036854775808 to 9223372036854775807)`}},
		{"not a boolean", "mqtt: {clean_session: maybe}\n",
			[]string{`config.yaml:1: mqtt.clean_session: "maybe" is not a boolean`}},
		{"list for a string", "mqtt:\n  client_id:\n    - a\n",
			[]string{`config.yaml:3: mqtt.client_id: must be a string, not a list`}},
		{"mapping for an integer", "mqtt: {qos: {a: 1}}\n",
			[]string{`config.yaml:1: mqtt.qos: must be an integer, not a mapping`}},
		{"scalar for a section", "executor: fast\nmqtt: [a]\n",
			[]string{
				`config.yaml:1: executor: must be a mapping, not "fast"`,
				`config.yaml:2: mqtt: must be a mapping, not a list`,
			}},
		{"nodes not a list", "nodes: {name: a}\n",
			[]string{`config.yaml:1: nodes: must be a list, not a mapping`}},
		{"node not a mapping", "nodes:\n  - imu\n  - [a]\n",
			[]string{
				`config.yaml:2: nodes[0]: must be a mapping, not "imu"`,
				`config.yaml:3: nodes[1]: must be a mapping, not a list`,
			}},
		{"params not a mapping", "nodes:\n  - name: a\n    type: t\n    params: [1, 2]\n",
			[]string{`config.yaml:4: nodes[0].params: must be a mapping, not a list`}},
		{"long value", "mqtt: {qos: " + "abcdefghij" + "abcdefghij" + "abcdefghij" + "abcdefghij" + "abcdefghij" + "abcdefghij" + "xyz}\n",
			[]string{`config.yaml:1: mqtt.qos: "abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghij"... is not an integer`}},

		// Values out of range.
		{"negative workers", "executor: {workers: -1}\n",
			[]string{`config.yaml:1: executor.workers: must be 0 (one per CPU) or more, not -1`}},
		{"negative priority workers", "executor: {priority_workers: -2}\n",
			[]string{`config.yaml:1: executor.priority_workers: must be 0 (none) or more, not -2`}},
		{"realtime without priority workers", "executor:\n  workers: 2\n  realtime: true\n",
			[]string{`config.yaml:3: executor.realtime: needs executor.priority_workers: the real-time class is theirs`}},
		{"negative gc headroom", "executor:\n  gc_headroom: -1MiB\n",
			[]string{`config.yaml:2: executor.gc_headroom: "-1MiB" is not a size (bytes, or a number with B, KiB, MiB, GiB, kB, MB or GB)`}},
		{"zero queue depth", "executor:\n  queue_depth: 0\n",
			[]string{`config.yaml:2: executor.queue_depth: must be 1 or more, not 0`}},
		{"bad overflow", "executor:\n  overflow: drop_all\n",
			[]string{`config.yaml:2: executor.overflow: must be drop_oldest, drop_newest or block, not "drop_all"`}},
		{"wildcard clock topic", "executor:\n  clock_topic: clock/#\n",
			[]string{`config.yaml:2: executor.clock_topic: must be a topic name, without wildcards, not "clock/#"`}},
		{"bad timer source", "executor:\n  timer_source: atomic\n",
			[]string{`config.yaml:2: executor.timer_source: must be precise or go, not "atomic"`}},
		{"no drain", "executor:\n  drain_timeout: 0s\n",
			[]string{`config.yaml:2: executor.drain_timeout: must be 1ms or more, not 0s`}},
		{"bad qos", "mqtt:\n  qos: 3\n",
			[]string{`config.yaml:2: mqtt.qos: must be 0, 1 or 2, not 3`}},
		{"negative qos", "mqtt:\n  qos: -1\n",
			[]string{`config.yaml:2: mqtt.qos: must be 0, 1 or 2, not -1`}},

		// The broker.
		{"broker without scheme", "mqtt: {broker: 'localhost:1883'}\n",
			[]string{`config.yaml:1: mqtt.broker: must be "embedded" or a URL such as tcp://host:1883, not "localhost:1883"`}},
		{"broker scheme", "mqtt: {broker: 'http://u:secret@h:80'}\n",
			[]string{`config.yaml:1: mqtt.broker: "http://u:xxxxx@h:80": scheme "http" is not tcp, mqtt, ssl, tls, mqtts, tcps, ws or wss`}},
		{"broker without host", "mqtt: {broker: 'tcp://:1883'}\n",
			[]string{`config.yaml:1: mqtt.broker: "tcp://:1883" has no host`}},
		{"broker without port", "mqtt: {broker: 'tcp://broker'}\n",
			[]string{`config.yaml:1: mqtt.broker: "tcp://broker" has no port (e.g. tcp://broker:1883)`}},
		{"TLS broker without port", "mqtt: {broker: 'mqtts://broker'}\n",
			[]string{`config.yaml:1: mqtt.broker: "mqtts://broker" has no port (e.g. mqtts://broker:8883)`}},
		{"broker port out of range", "mqtt: {broker: 'tcp://broker:70000'}\n",
			[]string{`config.yaml:1: mqtt.broker: "tcp://broker:70000" has no valid port (0 to 65535)`}},
		{"broker URL does not parse", "mqtt: {broker: 'tcp://u:pw@h:x'}\n",
			[]string{`config.yaml:1: mqtt.broker: "tcp://xxxxx@h:x" is not a valid URL`}},

		// Listen addresses.
		{"listen without port", "mqtt:\n  listen: localhost\n",
			[]string{`config.yaml:2: mqtt.listen: must be host:port (e.g. 127.0.0.1:1883), not "localhost"`}},
		{"listen bad port", "mqtt:\n  listen: 'localhost:http'\nmetrics:\n  listen: ':99999'\n",
			[]string{
				`config.yaml:2: mqtt.listen: "localhost:http" has no valid port (0 to 65535)`,
				`config.yaml:4: metrics.listen: ":99999" has no valid port (0 to 65535)`,
			}},
		{"metrics listen", "metrics: {listen: '9090'}\n",
			[]string{`config.yaml:1: metrics.listen: must be host:port (e.g. 127.0.0.1:9090), not "9090"`}},

		// TLS.
		{"cert without key", "mqtt:\n  broker: ssl://h:8883\n  tls:\n    cert: c.pem\n",
			[]string{`config.yaml:3: mqtt.tls.key: required with cert`}},
		{"key without cert", "mqtt:\n  broker: ssl://h:8883\n  tls: {key: k.pem}\n",
			[]string{`config.yaml:3: mqtt.tls.cert: required with key`}},
		{"TLS with embedded broker", "mqtt:\n  tls: {ca: ca.pem}\n",
			[]string{`config.yaml:2: mqtt.tls: the embedded broker does not use TLS; set broker to an ssl://, mqtts:// or wss:// URL`}},
		{"TLS with tcp broker", "mqtt:\n  broker: tcp://u:pw@h:1883\n  tls: {ca: ca.pem}\n",
			[]string{`config.yaml:3: mqtt.tls: broker "tcp://u:xxxxx@h:1883" does not use TLS; use ssl://, mqtts:// or wss://`}},

		// Nodes.
		{"node without name and type", "nodes:\n  - group: g\n  -\n",
			[]string{
				`config.yaml:2: nodes[0].name: required`,
				`config.yaml:2: nodes[0].type: required`,
				`config.yaml:3: nodes[1].name: required`,
				`config.yaml:3: nodes[1].type: required`,
			}},
		{"empty name", "nodes:\n  - type: t\n    name: ''\n",
			[]string{`config.yaml:3: nodes[0].name: required`}},
		{"bad names", "nodes:\n  - {name: imu bridge, type: t, group: 'a/b'}\n  - {name: 'ü', type: t}\n",
			[]string{
				`config.yaml:2: nodes[0].name: "imu bridge" is not a valid name: use letters, digits, _ and -`,
				`config.yaml:2: nodes[0].group: "a/b" is not a valid name: use letters, digits, _ and -`,
				`config.yaml:3: nodes[1].name: "ü" is not a valid name: use letters, digits, _ and -`,
			}},
		{"duplicate names", "nodes:\n  - name: imu\n    type: a\n  - name: gps\n    type: b\n  - type: c\n    name: imu\n  - {name: imu, type: d}\n",
			[]string{
				`config.yaml:7: nodes[2].name: duplicate node name "imu" (first at line 2)`,
				`config.yaml:8: nodes[3].name: duplicate node name "imu" (first at line 2)`,
			}},

		// Environment variables.
		{"unset variable", "mqtt:\n  client_id: x\n  username: ${MQTT_USER}\n",
			[]string{`config.yaml:3: mqtt.username: environment variable MQTT_USER is not set`}},
		{"unset variable in params", "nodes:\n  - name: a\n    type: t\n    params:\n      topics: [a, '${TOPIC}/x']\n",
			[]string{`config.yaml:5: nodes[0].params.topics[1]: environment variable TOPIC is not set`}},
		{"unterminated", "mqtt: {password: 'a${B'}\n",
			[]string{`config.yaml:1: mqtt.password: unterminated "${" in "a${B" (write "$$" for a literal "$")`}},
		{"bad variable name", "mqtt: {password: '${1B}'}\n",
			[]string{`config.yaml:1: mqtt.password: bad substitution "${1B}": want ${NAME} or ${NAME:-default}, NAME of letters, digits and _`}},
		{"shell syntax not supported", "mqtt: {password: '${B-x}'}\n",
			[]string{`config.yaml:1: mqtt.password: bad substitution "${B-x}": want ${NAME} or ${NAME:-default}, NAME of letters, digits and _`}},
		{"expanded value of the wrong type", "executor: {workers: '${W}'}\n",
			[]string{`config.yaml:1: executor.workers: "many" is not an integer`}},

		// Anchors and aliases.
		{"alias cycle", "nodes: &n\n  - name: a\n    type: t\n    params: {x: *n}\n",
			[]string{`config.yaml:4: nodes[0].params.x: alias *n refers to a value that contains it`}},
		{"merge cycle", "nodes:\n  - &a\n    name: a\n    type: t\n    <<: *a\n",
			[]string{`config.yaml:5: nodes[0].<<: alias *a refers to a value that contains it`}},
		{"bad merge", "executor:\n  <<: 5\n",
			[]string{`config.yaml:2: executor.<<: must be a mapping or a list of mappings, not "5"`}},
		{"merge of a list of lists", "executor:\n  <<: [[a]]\n",
			[]string{`config.yaml:2: executor.<<: must be a mapping or a list of mappings, not a list of lists`}},
		{"billion laughs", laughs(),
			[]string{`config.yaml:6: nodes[0].params.l4[6][0][3][8]: the document expands into too many values (aliases of aliases?)`}},

		// Several errors at once, in line order.
		{"several", `
executor:
  workers: x
  queue_depth: 0
mqtt:
  broker: ftp://h
  qos: 7
  username: ${NOPE}
  colour: red
nodes:
  - name: a
    type: bridge
  - name: a
    params:
      period: ${ALSO_NOPE}
`, []string{
			`config.yaml:3: executor.workers: "x" is not an integer`,
			`config.yaml:4: executor.queue_depth: must be 1 or more, not 0`,
			`config.yaml:6: mqtt.broker: "ftp://h": scheme "ftp" is not tcp, mqtt, ssl, tls, mqtts, tcps, ws or wss`,
			`config.yaml:7: mqtt.qos: must be 0, 1 or 2, not 7`,
			`config.yaml:8: mqtt.username: environment variable NOPE is not set`,
			`config.yaml:9: mqtt.colour: unknown key (known keys: broker, listen, client_id, username, password, qos, protocol, clean_session, session_expiry, keepalive, max_payload, linger, tls, users, allow_anonymous, max_connections)`,
			`config.yaml:13: nodes[1].name: duplicate node name "a" (first at line 11)`,
			`config.yaml:13: nodes[1].type: required`,
			`config.yaml:15: nodes[1].params.period: environment variable ALSO_NOPE is not set`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := parse(t, tc.doc, map[string]string{"W": "many"})
			require.Equal(t, tc.want, lines(err))
			for _, e := range config.Errors(err) {
				require.Equal(t, "config.yaml", e.File)
				require.NotZero(t, e.Line, e.Error())
			}
			if len(tc.want) > 0 && len(tc.want[0]) > 25 && tc.want[0][:25] == "config.yaml:1: invalid YA" {
				require.Nil(t, cfg)
			}
		})
	}
}

// laughs returns a "billion laughs" document: nine levels of nine aliases
// in node params.
func laughs() string {
	doc := "nodes:\n  - name: a\n    type: t\n    params:\n      l0: &l0 [lol]\n"
	for i := 1; i < 10; i++ {
		doc += fmt.Sprintf("      l%d: &l%d [", i, i)
		for j := range 9 {
			if j > 0 {
				doc += ", "
			}
			doc += fmt.Sprintf("*l%d", i-1)
		}
		doc += "]\n"
	}
	return doc
}

func TestMalformedReturnsNoConfig(t *testing.T) {
	cfg, err := parse(t, "a: [\n", nil)
	require.Nil(t, cfg)
	require.Error(t, err)

	// Otherwise the config comes back with the errors, invalid values at
	// their defaults, for the caller's own checks.
	cfg, err = parse(t, "executor: {workers: x}\nnodes:\n  - {name: a, type: nope}\n", nil)
	require.Error(t, err)
	require.NotNil(t, cfg)
	require.Equal(t, 0, cfg.Executor.Workers)
	require.Equal(t, "nope", cfg.Nodes[0].Type)
	all := config.Join(err, cfg.Nodes[0].Errorf("type", "unknown node type %q", "nope"))
	require.Equal(t, []string{
		`config.yaml:1: executor.workers: "x" is not an integer`,
		`config.yaml:3: nodes[0].type: unknown node type "nope"`,
	}, lines(all))
}

// mqtt.keepalive is whole seconds from 1 s to 65535 s.
func TestKeepAliveErrors(t *testing.T) {
	for _, tc := range []struct{ value, want string }{
		{"0s", `config.yaml:2: mqtt.keepalive: must be from 1s to 18h12m15s (65535 s), not 0s`},
		{"500ms", `config.yaml:2: mqtt.keepalive: must be from 1s to 18h12m15s (65535 s), not 500ms`},
		{"1.5s", `config.yaml:2: mqtt.keepalive: must be whole seconds, not 1.5s`},
		{"24h", `config.yaml:2: mqtt.keepalive: must be from 1s to 18h12m15s (65535 s), not 24h0m0s`},
	} {
		_, err := config.Parse("config.yaml", []byte("mqtt:\n  keepalive: "+tc.value+"\n"), nil)
		require.EqualError(t, err, tc.want, tc.value)
	}
	cfg, err := config.Parse("config.yaml", []byte("mqtt:\n  keepalive: 5s\n"), nil)
	require.NoError(t, err)
	require.Equal(t, 5*time.Second, cfg.MQTT.KeepAlive)
}

// mqtt.linger is from 0 s (the default: no linger) to 1 s.
func TestLingerErrors(t *testing.T) {
	for _, tc := range []struct{ value, want string }{
		{"-1ms", `config.yaml:2: mqtt.linger: must be from 0s to 1s, not -1ms`},
		{"1.5s", `config.yaml:2: mqtt.linger: must be from 0s to 1s, not 1.5s`},
	} {
		_, err := config.Parse("config.yaml", []byte("mqtt:\n  linger: "+tc.value+"\n"), nil)
		require.EqualError(t, err, tc.want, tc.value)
	}
	cfg, err := config.Parse("config.yaml", []byte("mqtt:\n  linger: 5ms\n"), nil)
	require.NoError(t, err)
	require.Equal(t, 5*time.Millisecond, cfg.MQTT.Linger)
	cfg, err = config.Parse("config.yaml", []byte("nodes: []\n"), nil)
	require.NoError(t, err)
	require.Zero(t, cfg.MQTT.Linger, "the default")
}

// mqtt.session_expiry is whole seconds from 1 s (0 s would be a clean
// session) to MQTT 5's largest.
func TestSessionExpiryErrors(t *testing.T) {
	for _, tc := range []struct{ value, want string }{
		{"0s", `config.yaml:2: mqtt.session_expiry: must be from 1s to 1193046h28m15s, not 0s`},
		{"1.5s", `config.yaml:2: mqtt.session_expiry: must be whole seconds, not 1.5s`},
		{"1193047h", `config.yaml:2: mqtt.session_expiry: must be from 1s to 1193046h28m15s, not 1193047h0m0s`},
	} {
		_, err := config.Parse("config.yaml", []byte("mqtt:\n  session_expiry: "+tc.value+"\n"), nil)
		require.EqualError(t, err, tc.want, tc.value)
	}
	cfg, err := config.Parse("config.yaml", []byte("mqtt:\n  session_expiry: 1s\n"), nil)
	require.NoError(t, err)
	require.Equal(t, time.Second, cfg.MQTT.SessionExpiry)
}

// executor.procs is 0 (robotexec chooses) or more, and with threads of
// the workers' own at least the workers in all.
func TestProcsErrors(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"executor:\n  procs: -1\n", `config.yaml:2: executor.procs: must be 0 (robotexec chooses) or more, not -1`},
		{"executor:\n  workers: 2\n  priority_workers: 2\n  procs: 3\n", `config.yaml:4: executor.procs: must be at least the workers in all (4) with priority_workers or pin_workers, each on a thread of its own, not 3`},
		{"executor:\n  workers: 2\n  pin_workers: true\n  procs: 1\n", `config.yaml:4: executor.procs: must be at least the workers in all (2) with priority_workers or pin_workers, each on a thread of its own, not 1`},
	} {
		_, err := config.Parse("config.yaml", []byte(tc.yaml), nil)
		require.EqualError(t, err, tc.want, tc.yaml)
	}
	for _, y := range []string{"executor:\n  procs: 1\n", "executor:\n  workers: 2\n  pin_workers: true\n  procs: 2\n", "nodes: []\n"} {
		_, err := config.Parse("config.yaml", []byte(y), nil)
		require.NoError(t, err, y)
	}
}
