package config_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/config"
)

// mqtt.broker is one broker or a list of URLs; Broker is the first.
func TestBrokerList(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      config.BrokerList
	}{
		{"default", "nodes: []\n", config.BrokerList{"embedded"}},
		{"one", "mqtt: {broker: tcp://a:1883}\n", config.BrokerList{"tcp://a:1883"}},
		{"a list", "mqtt:\n  broker:\n    - tcp://a:1883\n    - tcp://b:1884\n", config.BrokerList{"tcp://a:1883", "tcp://b:1884"}},
		{"a flow list", "mqtt: {broker: [tcp://a:1883, tcp://b:1884]}\n", config.BrokerList{"tcp://a:1883", "tcp://b:1884"}},
		{"a list of one", "mqtt: {broker: [tcp://a:1883]}\n", config.BrokerList{"tcp://a:1883"}},
		{"expanded", "mqtt: {broker: ['${B1}', tcp://b:1884]}\n", config.BrokerList{"tcp://a:1883", "tcp://b:1884"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := parse(t, tc.doc, map[string]string{"B1": "tcp://a:1883"})
			require.NoError(t, err)
			require.Equal(t, tc.want, cfg.MQTT.Brokers)
			require.Equal(t, tc.want[0], cfg.MQTT.Broker)
		})
	}
}

// Each broker of a list is checked, and the error names its line.
func TestBrokerListErrors(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      []string
	}{
		{"empty", "mqtt:\n  broker: []\n",
			[]string{`config.yaml:2: mqtt.broker: must name a broker: "embedded", a URL, or a list of URLs`}},
		{"bad item", "mqtt:\n  broker:\n    - tcp://a:1883\n    - ftp://u:secret@b:1\n",
			[]string{`config.yaml:4: mqtt.broker[1]: "ftp://u:xxxxx@b:1": scheme "ftp" is not tcp, mqtt, ssl, tls, mqtts, tcps, ws or wss`}},
		{"embedded in a list", "mqtt:\n  broker: [embedded, tcp://b:1883]\n",
			[]string{`config.yaml:2: mqtt.broker[0]: "embedded" cannot be in a list: a list names the URLs of external brokers`}},
		{"twice", "mqtt:\n  broker:\n    - tcp://a:1883\n    - tcp://a:1883\n",
			[]string{`config.yaml:4: mqtt.broker[1]: "tcp://a:1883" is in the list twice`}},
		{"TLS and not", "mqtt:\n  broker:\n    - ssl://a:8883\n    - tcp://b:1883\n",
			[]string{`config.yaml:4: mqtt.broker[1]: "tcp://b:1883": the brokers of a list all use TLS (ssl://, mqtts://, wss://) or none does`}},
		{"a mapping", "mqtt:\n  broker: {a: 1}\n",
			[]string{`config.yaml:2: mqtt.broker: must be a broker or a list of broker URLs, not a mapping`}},
		{"users need the embedded broker", "mqtt:\n  broker: [tcp://a:1883, tcp://b:1883]\n  users: [{username: u, password: p}]\n",
			[]string{`config.yaml:3: mqtt.users: only the embedded broker has users; "tcp://a:1883" has its own`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse(t, tc.doc, nil)
			require.Equal(t, tc.want, lines(err))
		})
	}
}
