package app

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/config"
	_ "github.com/robotexec/robotexec/nodes/builtin" // the short types
)

// TestOneProc: which configs executor.procs 0 runs on one processor.
func TestOneProc(t *testing.T) {
	const bridge = "nodes:\n  - { name: a, type: bridge, params: { from: x, to: y } }\n"
	const external = "mqtt: { broker: tcp://127.0.0.1:1883 }\n"
	for _, tc := range []struct {
		name, yaml string
		extra, one bool
	}{
		{"built-in nodes on an external broker", external + bridge, false, true},
		{"the program's own work", external + bridge, true, false},
		{"the embedded broker", bridge, false, false},
		{"the live view", external + "view: { listen: 127.0.0.1:0 }\n" + bridge, false, false},
		{"priority workers", external + "executor: { priority_workers: 1 }\n" + bridge, false, false},
		{"pinned workers", external + "executor: { pin_workers: true }\n" + bridge, false, false},
		{"a type not marked short", external + "nodes:\n  - { name: a, type: custom, params: {} }\n", false, false},
	} {
		cfg, err := config.Parse("config.yaml", []byte(tc.yaml), nil)
		require.NoError(t, err, tc.name)
		require.Equal(t, tc.one, oneProc(cfg, tc.extra), tc.name)
	}
}
