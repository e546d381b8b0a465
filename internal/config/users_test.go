package config_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/config"
)

// mqtt.users and mqtt.allow_anonymous: parsed with passwords from the
// environment, and who may connect follows the listen address.
func TestUsers(t *testing.T) {
	cfg := mustParse(t, `mqtt:
  listen: 0.0.0.0:1883
  username: robot
  password: ${PW}
  users:
    - { username: robot, password: '${PW}', read: ['#'], write: ['robot/#', 'sensors/#'] }
    - username: viewer
      password: v
      read: [robot/status]
`, map[string]string{"PW": "s3cret"})
	require.Equal(t, []config.User{
		{Username: "robot", Password: "s3cret", Read: []string{"#"}, Write: []string{"robot/#", "sensors/#"}},
		{Username: "viewer", Password: "v", Read: []string{"robot/status"}},
	}, cfg.MQTT.Users)
	require.False(t, cfg.MQTT.AnonymousAllowed())

	for doc, want := range map[string]bool{
		"mqtt: {}\n":                                              true,
		"mqtt: {listen: 'localhost:1884'}\n":                      true,
		"mqtt: {listen: '[::1]:1883'}\n":                          true,
		"mqtt: {listen: '0.0.0.0:1883', allow_anonymous: true}\n": true,
		"mqtt: {listen: '127.0.0.1:1883', allow_anonymous: true, users: [{username: a, password: b}]}\n": true,
		"mqtt: {username: a, users: [{username: a, password: b}], password: b}\n":                        false,
	} {
		require.Equal(t, want, mustParse(t, doc, nil).MQTT.AnonymousAllowed(), doc)
	}
}

func TestUserErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		doc  string
		want []string
	}{
		{"open to the network", "mqtt:\n  listen: 0.0.0.0:1883\n",
			[]string{`config.yaml:2: mqtt.listen: "0.0.0.0:1883" is reachable from the network: name who may connect in mqtt.users, or set allow_anonymous: true to let anyone in`}},
		{"open on an interface", "mqtt:\n  listen: '192.168.1.5:1883'\n  allow_anonymous: false\n",
			[]string{`config.yaml:2: mqtt.listen: "192.168.1.5:1883" is reachable from the network: name who may connect in mqtt.users, or set allow_anonymous: true to let anyone in`}},
		{"external broker", "mqtt:\n  broker: tcp://h:1883\n  users: [{username: a, password: b}]\n  allow_anonymous: true\n",
			[]string{
				`config.yaml:3: mqtt.users: only the embedded broker has users; "tcp://h:1883" has its own`,
				`config.yaml:4: mqtt.allow_anonymous: only for the embedded broker`,
			}},
		{"incomplete users", "mqtt:\n  users:\n    - username: a\n    - password: p\n    - {username: a, password: q}\n",
			[]string{
				`config.yaml:1: mqtt.username: required: the embedded broker refuses anonymous clients, so robotexec's own client must connect as one of mqtt.users`,
				`config.yaml:3: mqtt.users[0].password: required`,
				`config.yaml:4: mqtt.users[1].username: required`,
				`config.yaml:5: mqtt.users[2].username: duplicate user "a" (first at line 3)`,
			}},
		{"own client anonymous", "mqtt:\n  users: [{username: a, password: b}]\n",
			[]string{`config.yaml:1: mqtt.username: required: the embedded broker refuses anonymous clients, so robotexec's own client must connect as one of mqtt.users`}},
		{"own client unknown", "mqtt:\n  username: c\n  users: [{username: a, password: b}]\n",
			[]string{`config.yaml:2: mqtt.username: "c" is not among mqtt.users, so robotexec's own client could not connect`}},
		{"own client wrong password", "mqtt:\n  username: a\n  password: x\n  users: [{username: a, password: b}]\n",
			[]string{`config.yaml:3: mqtt.password: not the password of user "a" in mqtt.users`}},
		{"nobody", "mqtt:\n  allow_anonymous: false\n",
			[]string{`config.yaml:2: mqtt.allow_anonymous: false with no mqtt.users lets no client in, robotexec's own included: list the users`}},
		{"unknown key", "mqtt:\n  allow_anonymous: true\n  users: [{username: a, password: b, publish: ['#']}]\n",
			[]string{`config.yaml:3: mqtt.users[0].publish: unknown key (known keys: username, password, read, write)`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse(t, tc.doc, nil)
			require.Equal(t, tc.want, lines(err))
		})
	}
}
