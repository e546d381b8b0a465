package config_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/config"
)

func TestSize(t *testing.T) {
	for text, want := range map[string]config.Size{
		"0": 0, "1048576": 1 << 20, "0x100": 256, "1_000": 1000,
		"12B": 12, "1KiB": 1 << 10, "1MiB": 1 << 20, "512 KiB": 512 << 10, "2GiB": 2 << 30,
		"1kB": 1000, "1KB": 1000, "3MB": 3e6, "1GB": 1e9,
	} {
		var s config.Size
		require.NoError(t, s.UnmarshalText([]byte(text)), text)
		require.Equal(t, want, s, text)
	}
	for _, text := range []string{"", "MiB", "1.5MiB", "-1", "1TiB", "1 mib", "9223372036854775807KiB"} {
		var s config.Size
		require.Error(t, s.UnmarshalText([]byte(text)), text)
	}
	require.Equal(t, "1MiB", config.Size(1<<20).String())
	require.Equal(t, "1000B", config.Size(1000).String())
	require.Equal(t, "0B", config.Size(0).String())
}

func TestMaxPayloadErrors(t *testing.T) {
	for doc, want := range map[string]string{
		"mqtt:\n  max_payload: 0\n":    `config.yaml:2: mqtt.max_payload: must be from 1B to 255MiB, not 0B`,
		"mqtt:\n  max_payload: 1GiB\n": `config.yaml:2: mqtt.max_payload: must be from 1B to 255MiB, not 1GiB`,
		"mqtt:\n  max_payload: lots\n": `config.yaml:2: mqtt.max_payload: "lots" is not a size (bytes, or a number with B, KiB, MiB, GiB, kB, MB or GB)`,
		"mqtt:\n  max_payload: [1]\n":  `config.yaml:2: mqtt.max_payload: must be a string, not a list`,
	} {
		_, err := parse(t, doc, nil)
		require.Equal(t, []string{want}, lines(err), doc)
	}
	require.Equal(t, config.Size(64<<10), mustParse(t, "mqtt: {max_payload: 64KiB}\n", nil).MQTT.MaxPayload)
}
