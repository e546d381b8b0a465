package config_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestExpansion(t *testing.T) {
	vars := map[string]string{"A": "x", "B": "y", "EMPTY": "", "N": "4", "REF": "${B}"}
	for _, tc := range []struct{ value, want string }{
		{"${A}", "x"},
		{"pre-${A}-post", "pre-x-post"},
		{"${A}${B}", "xy"},
		{"${UNSET:-def}", "def"},
		{"${EMPTY:-def}", "def"},
		{"${A:-def}", "x"},
		{"${UNSET:-a:-b}", "a:-b"},
		{"${UNSET:-${B}}", "y"},
		{"${UNSET:-${UNSET2:-z}}", "z"},
		{"${UNSET:-{x}}", "{x}"},
		{"${A:-${UNSET}}", "x"}, // a default is expanded only when used
		{"${UNSET:-$$}", "$"},
		{"${UNSET:-with space}", "with space"},
		{"${REF}", "${B}"}, // a value is not expanded again
		{"$$", "$"},
		{"$${A}", "${A}"},
		{"$$${A}", "$x"},
		{"$$$${A}", "$${A}"},
		{"$SYS/broker/#", "$SYS/broker/#"},
		{"$share/group/topic", "$share/group/topic"},
		{"5$", "5$"},
		{"$A", "$A"},
		{"a$", "a$"},
		{"no dollar", "no dollar"},
		// A value that expands to nothing counts as null: the default.
		{"${EMPTY}", "robotexec-robot1"},
		{"${UNSET:-}", "robotexec-robot1"},
		{"${EMPTY}${UNSET:-}", "robotexec-robot1"},
	} {
		t.Run(tc.value, func(t *testing.T) {
			for _, doc := range []string{
				"mqtt:\n  client_id: '" + tc.value + "'\n",
				"mqtt:\n  client_id: \"" + tc.value + "\"\n",
				"mqtt:\n  client_id: |-\n    " + tc.value + "\n",
			} {
				cfg := mustParse(t, doc, vars)
				require.Equal(t, tc.want, cfg.MQTT.ClientID, doc)

				// Node params expand alike.
				cfg = mustParse(t, "nodes:\n  - name: a\n    type: t\n    params:\n      v: >-\n        "+tc.value+"\n", vars)
				p := struct {
					V string `yaml:"v"`
				}{V: "robotexec-robot1"}
				require.NoError(t, cfg.Nodes[0].Params.Decode(&p))
				require.Equal(t, tc.want, p.V)
			}
		})
	}
}

func TestExpansionTypes(t *testing.T) {
	vars := map[string]string{"N": "4", "C": "true", "F": "0.5", "D": "250ms", "S": "text", "NUL": "null"}
	cfg := mustParse(t, `
executor:
  workers: ${N}
  queue_depth: "${N}0"
mqtt:
  clean_session: ${C}
  password: ${NUL}
nodes:
  - name: n${N}
    type: t
    params:
      int: ${N}
      float: ${F}
      bool: ${C}
      str: ${S}
      null: ${NUL}
      quoted: "${N}"
      dur: ${D}
      "${S}": key
      list: [a, "${S}"]
`, vars)
	require.Equal(t, 4, cfg.Executor.Workers)
	require.Equal(t, 40, cfg.Executor.QueueDepth)
	require.True(t, cfg.MQTT.CleanSession)
	require.Equal(t, "null", cfg.MQTT.Password)
	require.Equal(t, "n4", cfg.Nodes[0].Name)

	var got map[string]any
	require.NoError(t, cfg.Nodes[0].Params.Decode(&got))
	require.Equal(t, map[string]any{
		"int":    4,
		"float":  0.5,
		"bool":   true,
		"str":    "text",
		"null":   nil,
		"quoted": "4",
		"dur":    "250ms",
		"${S}":   "key", // keys are not expanded
		"list":   []any{"a", "text"},
	}, got)
}

func TestExpansionNested(t *testing.T) {
	// Nested defaults cost their length, not its square.
	deep := strings.Repeat("${U:-", 20000) + "z" + strings.Repeat("}", 20000)
	cfg := mustParse(t, "mqtt:\n  client_id: '"+deep+"'\n", nil)
	require.Equal(t, "z", cfg.MQTT.ClientID)

	_, err := parse(t, "mqtt:\n  client_id: '${U:-${V}}'\n", nil)
	require.Equal(t, []string{"config.yaml:2: mqtt.client_id: environment variable V is not set"}, lines(err))
	_, err = parse(t, "mqtt:\n  client_id: '${U:-x'\n", nil)
	require.Equal(t, []string{`config.yaml:2: mqtt.client_id: unterminated "${" in "${U:-x" (write "$$" for a literal "$")`}, lines(err))
	_, err = parse(t, "mqtt:\n  client_id: '${U:-${}}'\n", nil)
	require.Equal(t, []string{`config.yaml:2: mqtt.client_id: bad substitution "${}": want ${NAME} or ${NAME:-default}, NAME of letters, digits and _`}, lines(err))
}
