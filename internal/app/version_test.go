package app

import (
	"net"
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/config"
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

// The graph's metrics URL keeps the host metrics.listen names and takes
// the port bound, for a listen address with port 0.
func TestMetricsURLNamesTheBoundPort(t *testing.T) {
	cfg := &config.Config{}
	cfg.Metrics.Listen = "localhost:0"
	o, err := newObservability(cfg, Options{})
	require.NoError(t, err)
	defer o.close()
	_, port, err := net.SplitHostPort(o.server.Addr().String())
	require.NoError(t, err)
	require.NotEqual(t, "0", port)
	require.Equal(t, "http://localhost:"+port+"/metrics", o.metricsURL(cfg.Metrics.Listen))
	require.Empty(t, (&observability{}).metricsURL("localhost:0"), "no server, no URL")
}
