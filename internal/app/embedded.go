package app

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/config"
	"github.com/robotexec/robotexec/internal/mqtt/broker"
	"github.com/robotexec/robotexec/subscribers"
)

// userErrors checks the topic filters of mqtt.users and view.users, which
// config.Load leaves to the packages that know MQTT's syntax.
func userErrors(cfg *config.Config) []error {
	var errs []error
	for _, section := range []struct {
		path  string
		users []config.User
	}{{"mqtt.users", cfg.MQTT.Users}, {"view.users", cfg.View.Users}} {
		for i, u := range section.users {
			errs = append(errs, filterErrors(cfg, fmt.Sprintf("%s[%d].read", section.path, i), u.Read)...)
			errs = append(errs, filterErrors(cfg, fmt.Sprintf("%s[%d].write", section.path, i), u.Write)...)
		}
	}
	return errs
}

// filterErrors checks filters, a user's list at path.
func filterErrors(cfg *config.Config, path string, filters []string) []error {
	var errs []error
	for j, f := range filters {
		p := fmt.Sprintf("%s[%d]", path, j)
		switch err := subscribers.ValidateFilter(f); {
		case err != nil:
			errs = append(errs, cfg.Errorf(p, "%s", strings.TrimPrefix(err.Error(), "subscribers: ")))
		case bus.Shared(f):
			errs = append(errs, cfg.Errorf(p, "%q: name the topics; access to them covers shared subscriptions too", f))
		}
	}
	return errs
}

// brokerConfig returns the embedded broker's configuration: where it
// listens, who may connect and what each may use, and packets large
// enough for mqtt.max_payload. The process's own
// client connects as mqtt.username when set, whose access also covers
// the client's own topics, robotexec/CLIENT_ID/#.
func brokerConfig(cfg *config.Config, logger *slog.Logger) broker.Config {
	m := cfg.MQTT
	bc := broker.Config{Listen: m.Listen, Logger: logger, Anonymous: broker.AnonymousRefused,
		MaxConnections: m.MaxConnections,
		// Room for a max_payload publication with the longest topic and
		// its properties, and no more.
		MaxPacketSize: int(m.MaxPayload) + 1<<16 + 1<<10}
	if m.AnonymousAllowed() {
		bc.Anonymous = broker.AnonymousAllowed
	}
	if len(m.Users) == 0 {
		return bc
	}
	bc.Users = make(map[string]broker.User, len(m.Users))
	for _, u := range m.Users {
		bu := broker.User{Password: u.Password, Read: u.Read, Write: u.Write}
		if u.Username == m.Username {
			own := ownTopics(cfg)
			bu.Read = append(append([]string(nil), u.Read...), own)
			bu.Write = append(append([]string(nil), u.Write...), own)
		}
		bc.Users[u.Username] = bu
	}
	return bc
}

// ownWritable returns what the process's own client may publish to on
// the embedded broker: nil (every topic) unless it connects as one of
// mqtt.users.
func ownWritable(cfg *config.Config) []string {
	m := cfg.MQTT
	if m.Broker != config.EmbeddedBroker || m.Username == "" {
		return nil
	}
	for _, u := range m.Users {
		if u.Username == m.Username {
			return append(append([]string{}, u.Write...), ownTopics(cfg))
		}
	}
	return nil
}

// ownTopics is the filter of the client's own topics: its status and its
// fences.
func ownTopics(cfg *config.Config) string {
	return fmt.Sprintf("robotexec/%s/#", cfg.MQTT.ClientID)
}
