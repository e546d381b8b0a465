package mqtt_test

import (
	"context"
	"crypto/tls"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/executor"
	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/mqtt"
	"github.com/robotexec/robotexec/internal/mqtt/broker"
	"github.com/robotexec/robotexec/internal/mqtttest"
	"github.com/robotexec/robotexec/internal/testpki"
)

// The client speaks TLS with a CA file and a client certificate to a
// broker that requires one; with the wrong CA it says why it cannot
// connect.
func TestTLS(t *testing.T) {
	t.Parallel()
	p := testpki.New(t)
	b := mqtttest.Embedded(t, broker.Config{TLS: &tls.Config{
		Certificates: []tls.Certificate{p.Server},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    p.CAPool,
		MinVersion:   tls.VersionTLS12,
	}})
	url := b.Broker().URL()
	require.Equal(t, "ssl://"+b.Addr(), url)

	c := dial(t, url, mqtt.Config{QoS: 1, TLS: mqtt.TLSFiles{CA: p.CAFile, Cert: p.CertFile, Key: p.KeyFile}})
	ex := executor.New(executor.Options{Workers: 1})
	rec := newRecorder()
	_, err := ex.NewOwner("n", nil).Subscribe(c, "secure/#", rec.add)
	require.NoError(t, err)
	startExecutor(t, ex)
	pub, err := c.Publisher("secure/x", bus.WithQoS(1))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	require.NoError(t, c.PublishWait(ctx, msgOf(pub, []byte("over tls"))))
	require.Equal(t, "over tls", string(rec.waitCount(t, 1)[0].Payload))

	for _, tc := range []struct {
		name  string
		files mqtt.TLSFiles
		want  string
	}{
		{"wrong CA", mqtt.TLSFiles{CA: p.OtherCA, Cert: p.CertFile, Key: p.KeyFile}, "certificate"},
		{"no client certificate", mqtt.TLSFiles{CA: p.CAFile}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dialNoWait(t, url, mqtt.Config{TLS: tc.files})
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			err := c.WaitConnected(ctx)
			require.Error(t, err)
			require.ErrorContains(t, err, url)
			require.ErrorContains(t, err, tc.want)
		})
	}
}
