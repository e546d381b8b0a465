package app

import (
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestVersion: a version the build set wins; without one, the build
// info's, "(devel)" for a local checkout.
func TestVersion(t *testing.T) {
	t.Parallel()
	require.Equal(t, "v1.2.3", Version("v1.2.3"))
	require.Regexp(t, regexp.MustCompile(`^(\(devel\)|v\d+\.\d+\.\d+\S*)$`), Version(""))
}

// TestMetricsURL: the URL that the graph gives for metrics.listen; an
// address on every interface names this host.
func TestMetricsURL(t *testing.T) {
	t.Parallel()
	host, err := os.Hostname()
	require.NoError(t, err)
	for listen, want := range map[string]string{
		"":               "",
		"127.0.0.1:9090": "http://127.0.0.1:9090/metrics",
		"[::1]:9090":     "http://[::1]:9090/metrics",
		"robot:9090":     "http://robot:9090/metrics",
		":9090":          "http://" + host + ":9090/metrics",
		"0.0.0.0:9090":   "http://" + host + ":9090/metrics",
		"[::]:9090":      "http://" + host + ":9090/metrics",
		"no port":        "",
	} {
		require.Equal(t, want, metricsURL(listen), "listen %q", listen)
	}
}
