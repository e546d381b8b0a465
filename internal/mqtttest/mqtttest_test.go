package mqtttest_test

import (
	"fmt"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/mqtt/broker"
	"github.com/robotexec/robotexec/internal/mqtttest"
	"github.com/robotexec/robotexec/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Run(m)) }

// Each broker accepts connections, stops, and starts again on the same
// port (mosquitto as a new process).
func TestBrokersStopAndStart(t *testing.T) {
	for _, tc := range []struct {
		name  string
		start func(t *testing.T) mqtttest.Broker
	}{
		{"embedded", func(t *testing.T) mqtttest.Broker { return mqtttest.Embedded(t, broker.Config{}) }},
		{"mosquitto", func(t *testing.T) mqtttest.Broker {
			return mqtttest.Mosquitto(t, mqtttest.MosquittoOptions{Persistence: true})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.start(t)
			require.Equal(t, tc.name, b.Name())
			require.Equal(t, "tcp://"+b.Addr(), b.URL())
			require.NoError(t, mqtttest.WaitDial(b.Addr(), time.Second))
			var pid int
			if m, ok := b.(*mqtttest.MosquittoBroker); ok {
				pid = m.PID()
				require.Positive(t, pid)
			}
			b.Stop()
			// (Whether the port now refuses connections is not checked:
			// another test may take it meanwhile.)
			if m, ok := b.(*mqtttest.MosquittoBroker); ok {
				require.Zero(t, m.PID())
			} else {
				require.Nil(t, b.(*mqtttest.EmbeddedBroker).Broker())
			}
			b.Start()
			require.NoError(t, mqtttest.WaitDial(b.Addr(), time.Second))
			if m, ok := b.(*mqtttest.MosquittoBroker); ok {
				require.NotEqual(t, pid, m.PID())
				require.Contains(t, m.Log(), "running")
			}
		})
	}
}

// The proxy relays bytes both ways; Cut closes what it relays and new
// connections still work; Refuse turns them away.
func TestProxy(t *testing.T) {
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer echo.Close()
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(c, c); _ = c.Close() }()
		}
	}()
	p := mqtttest.NewProxy(t, echo.Addr().String())

	roundTrip := func(c net.Conn) error {
		if _, err := c.Write([]byte("ping")); err != nil {
			return err
		}
		buf := make([]byte, 4)
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err := io.ReadFull(c, buf)
		return err
	}
	c, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, roundTrip(c))
	require.Equal(t, 1, p.Cut())
	require.Error(t, roundTrip(c))

	c2, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	defer c2.Close()
	require.NoError(t, roundTrip(c2))

	p.Refuse(true)
	c3, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err) // accepted by the kernel, then closed
	defer c3.Close()
	require.Error(t, roundTrip(c3))
}

// fakeTB records how a helper ended a test.
type fakeTB struct {
	fatal, skip string
}

func (f *fakeTB) Helper()                           {}
func (f *fakeTB) Name() string                      { return "fake" }
func (f *fakeTB) Cleanup(func())                    {}
func (f *fakeTB) Logf(string, ...any)               {}
func (f *fakeTB) TempDir() string                   { return "" }
func (f *fakeTB) Fatalf(format string, args ...any) { f.fatal = fmt.Sprintf(format, args...) }
func (f *fakeTB) Skipf(format string, args ...any)  { f.skip = fmt.Sprintf(format, args...) }

// Without mosquitto, its tests skip naming the install command, and fail
// instead under ROBOTEXEC_TEST_ALL=1.
func TestMissingMosquitto(t *testing.T) {
	t.Setenv(testenv.AllVar, "")
	var skipped fakeTB
	mqtttest.MissingMosquitto(&skipped)
	require.Contains(t, skipped.skip, "install it with `apt-get install -y mosquitto`")
	require.Empty(t, skipped.fatal)

	t.Setenv(testenv.AllVar, "1")
	var failed fakeTB
	mqtttest.MissingMosquitto(&failed)
	require.Contains(t, failed.fatal, "install it with `apt-get install -y mosquitto`")
	require.Empty(t, failed.skip)
}
