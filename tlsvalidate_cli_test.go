package robotexec_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/testpki"
)

// TestValidateTLSFiles: validate checks what run will load from the TLS
// files — PEM, a CA in the CA file, a key that goes with the certificate
// — and both say what is wrong with file:line, exit 2.
func TestValidateTLSFiles(t *testing.T) {
	t.Parallel()
	p := testpki.New(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		name, ca, cert, key, want string
	}{
		{"CA not PEM", p.NotPEM, p.CertFile, p.KeyFile, ":4: mqtt.tls.ca: " + p.NotPEM + ": holds no PEM certificate"},
		{"CA not a CA", p.Leaf, p.CertFile, p.KeyFile, ":4: mqtt.tls.ca: " + p.Leaf + ": holds no CA certificate"},
		{"key of another certificate", p.CAFile, p.CertFile, p.OtherKey, ":6: mqtt.tls.key: " + p.OtherKey + ": does not go with the certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name+".yaml")
			writeFile(t, path, "mqtt:\n  broker: ssl://127.0.0.1:8883\n  tls:\n    ca: "+tc.ca+"\n    cert: "+tc.cert+"\n    key: "+tc.key+"\n")
			for _, cmd := range []string{"validate", "run"} {
				r := runCmd(t, quickExit, robotexecBin, nil, cmd, path)
				require.Equal(t, 2, r.code, "%s", r)
				require.Contains(t, r.stderr, path+tc.want, "%s", r)
			}
		})
	}
	path := filepath.Join(dir, "good.yaml")
	writeFile(t, path, "mqtt:\n  broker: ssl://127.0.0.1:8883\n  tls: { ca: "+p.CAFile+", cert: "+p.CertFile+", key: "+p.KeyFile+" }\n")
	r := runCmd(t, quickExit, robotexecBin, nil, "validate", path)
	require.Equal(t, 0, r.code, "%s", r)
}
