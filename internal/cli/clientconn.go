package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/robotexec/robotexec/internal/config"
	"github.com/robotexec/robotexec/internal/mqtt"
)

// BrokerEnv is the environment variable that names the broker of the
// client commands when -broker does not.
const BrokerEnv = "ROBOTEXEC_BROKER"

// clientFlags are the connection flags of the client commands (pub,
// echo, record, play, node, topic, view).
type clientFlags struct {
	fs                           *flag.FlagSet
	broker                       *brokerFlag
	username, password, protocol *string
	config, ca, cert, key        *string
	timeout                      *time.Duration
}

// brokerFlag is -broker, which may repeat: the brokers tried in turn.
type brokerFlag []string

func (b *brokerFlag) String() string { return strings.Join(*b, ",") }

func (b *brokerFlag) Set(s string) error {
	if s == "" {
		return errors.New("empty broker URL")
	}
	*b = append(*b, s)
	return nil
}

func addClientFlags(fs *flag.FlagSet) clientFlags {
	b := new(brokerFlag)
	fs.Var(b, "broker", "broker URL: tcp://, ssl://, ws://; repeated, the brokers tried in turn (nodes of a cluster) "+
		"(default $"+BrokerEnv+", a URL or a comma-separated list, else -config's, else "+mqtt.DefaultBroker+")")
	return clientFlags{
		fs:       fs,
		broker:   b,
		config:   fs.String("config", "", "a robotexec config whose mqtt section names the broker, credentials and TLS files (optional)"),
		username: fs.String("username", "", "user name (optional)"),
		password: fs.String("password", os.Getenv("MQTT_PASSWORD"), "password (optional; default $MQTT_PASSWORD)"),
		ca:       fs.String("ca", "", "PEM file of the CAs that sign the broker's certificate (TLS; optional)"),
		cert:     fs.String("cert", "", "PEM file of the client certificate (TLS; optional, with -key)"),
		key:      fs.String("key", "", "PEM file of the client certificate's key (TLS; optional, with -cert)"),
		timeout:  fs.Duration("timeout", 10*time.Second, "how long to wait for the broker"),
		protocol: fs.String("protocol", mqtt.Protocol5, "MQTT version: 5, or 3.1.1 for brokers without MQTT 5"),
	}
}

// usageError is a command line or config problem found before
// connecting: exit 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// exitFor is the exit status of a command that failed with err.
func exitFor(err error) int {
	if errors.As(err, new(usageError)) {
		return ExitUsage
	}
	return ExitFailure
}

// set reports whether the flag name was given.
func (f clientFlags) set(name string) bool {
	found := false
	f.fs.Visit(func(fl *flag.Flag) { found = found || fl.Name == name })
	return found
}

// settings resolves the connection of a command: -broker, else
// $ROBOTEXEC_BROKER, else -config's mqtt section, else the default
// broker; flags given win over the config's values.
func (f clientFlags) settings(qos byte) (mqtt.Config, error) {
	mc := mqtt.Config{Protocol: *f.protocol, Username: *f.username, Password: *f.password}
	if *f.config != "" {
		cfg, err := config.Load(*f.config)
		if err != nil {
			return mc, usageError{err}
		}
		f.fromConfig(&mc, cfg.MQTT)
	}
	switch env := os.Getenv(BrokerEnv); {
	case len(*f.broker) > 0:
		mc.Brokers = *f.broker
	case env != "":
		mc.Brokers = strings.Split(env, ",")
	case len(mc.Brokers) == 0:
		mc.Brokers = []string{mqtt.DefaultBroker}
	}
	if *f.ca != "" || *f.cert != "" || *f.key != "" {
		mc.TLS = mqtt.TLSFiles{CA: *f.ca, Cert: *f.cert, Key: *f.key}
	}
	mc.ClientID = fmt.Sprintf("robotexec-cli-%d-%d", os.Getpid(), time.Now().UnixNano()%1e6)
	mc.QoS = qos
	mc.CleanSession = true
	mc.StatusTopic = "-"
	return mc, nil
}

// fromConfig takes the broker, credentials, protocol and TLS files of a
// config's mqtt section, where no flag gave them.
func (f clientFlags) fromConfig(mc *mqtt.Config, m config.MQTT) {
	mc.Brokers = m.Brokers
	if m.Broker == config.EmbeddedBroker {
		mc.Brokers = []string{"tcp://" + dialable(m.Listen)}
	}
	if !f.set("username") {
		mc.Username = m.Username
	}
	if !f.set("password") && m.Username != "" {
		mc.Password = m.Password
	}
	if !f.set("protocol") && m.Protocol != "" {
		mc.Protocol = m.Protocol
	}
	if t := m.TLS; t != nil {
		mc.TLS = mqtt.TLSFiles{CA: t.CA, Cert: t.Cert, Key: t.Key}
	}
}

// dialable is the address to dial for a listen address: a wildcard host
// is this machine.
func dialable(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return listen
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// dial connects a short-lived client: clean session, no status topic. A
// refused connection or CONNECT fails at once; a broker that does not
// answer, after -timeout.
func (f clientFlags) dial(ctx context.Context, stderr io.Writer, qos byte) (*mqtt.Client, error) {
	mc, err := f.settings(qos)
	if err != nil {
		return nil, err
	}
	mc.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	c, err := mqtt.Dial(mc)
	if err != nil {
		return nil, usageError{err}
	}
	if err := waitConnected(ctx, c, *f.timeout, len(mc.Brokers)); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// refusedNow reports whether the connection attempts to n brokers failed
// in a way that waiting will not mend: the connection or the credentials
// refused by every one.
func refusedNow(err error, n int) bool {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs := j.Unwrap()
		if len(errs) < n {
			return false
		}
		for _, e := range errs {
			if !refusedNow(e, 1) {
				return false
			}
		}
		return true
	}
	if n > 1 {
		return false // the others have not been tried
	}
	var re *mqtt.RefusedError
	switch {
	case err == nil:
		return false
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, mqtt.ErrNotAuthorized):
		return true
	}
	return errors.As(err, &re) && re.Op == "connect"
}

// waitConnected waits until c is connected, it is refused by its n
// brokers, or timeout. The errors name the brokers' URLs.
func waitConnected(ctx context.Context, c *mqtt.Client, timeout time.Duration, n int) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !c.Connected() {
		last := c.LastError()
		if refusedNow(last, n) {
			return last
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			if last := c.LastError(); last != nil {
				return last
			}
			return fmt.Errorf("cannot connect to %s: %w", strings.Join(c.Brokers(), ", "), ctx.Err())
		}
	}
	return nil
}
