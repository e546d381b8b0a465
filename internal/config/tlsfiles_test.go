package config_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/config"
	"github.com/robotexec/robotexec/internal/testpki"
)

// Load checks what the TLS files hold, as the connection will load them:
// PEM, a CA certificate in the CA file, a key that goes with the
// certificate; each problem names the line, the key and the file.
func TestTLSFileContents(t *testing.T) {
	p := testpki.New(t)
	for _, tc := range []struct {
		name          string
		ca, cert, key string
		want          []string // line: field: message, after the file name
	}{
		{"valid", p.CAFile, p.CertFile, p.KeyFile, nil},
		{"CA not PEM", p.NotPEM, p.CertFile, p.KeyFile, []string{":4: mqtt.tls.ca: " + p.NotPEM + ": holds no PEM certificate"}},
		{"CA not a CA", p.Leaf, p.CertFile, p.KeyFile, []string{":4: mqtt.tls.ca: " + p.Leaf + ": holds no CA certificate (basic constraints CA:TRUE): is it the client's or the broker's own certificate?"}},
		{"key of another certificate", p.CAFile, p.CertFile, p.OtherKey, []string{":6: mqtt.tls.key: " + p.OtherKey + ": does not go with the certificate: tls: private key does not match public key"}},
		{"key not PEM", p.CAFile, p.CertFile, p.NotPEM, []string{":6: mqtt.tls.key: " + p.NotPEM + ": holds no PEM block"}},
		{"certificate not PEM", p.CAFile, p.NotPEM, p.KeyFile, []string{":6: mqtt.tls.key: " + p.KeyFile + ": the certificate (mqtt.tls.cert) holds no PEM block"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.yaml")
			doc := fmt.Sprintf("mqtt:\n  broker: ssl://b:8883\n  tls:\n    ca: %s\n    cert: %s\n    key: %s\n", tc.ca, tc.cert, tc.key)
			require.NoError(t, os.WriteFile(path, []byte(doc), 0o600))
			_, err := config.Load(path)
			if tc.want == nil {
				require.NoError(t, err)
				return
			}
			var want []string
			for _, w := range tc.want {
				want = append(want, path+w)
			}
			require.Equal(t, want, lines(err))
		})
	}
}
