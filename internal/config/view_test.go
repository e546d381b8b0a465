package config_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/config"
)

// TestView: the view: section is off by default; its users are parsed as
// mqtt.users are, and who may connect follows the listen address as for
// the embedded broker.
func TestView(t *testing.T) {
	require.Equal(t, config.View{}, mustParse(t, "", nil).View)
	cfg := mustParse(t, `view:
  listen: 0.0.0.0:8765
  users:
    - { username: ops, password: '${PW}', read: ['#'], write: [sensors/#] }
`, map[string]string{"PW": "s3cret"})
	require.Equal(t, "0.0.0.0:8765", cfg.View.Listen)
	require.Equal(t, []config.User{{Username: "ops", Password: "s3cret", Read: []string{"#"}, Write: []string{"sensors/#"}}}, cfg.View.Users)
	require.False(t, cfg.View.AnonymousAllowed())

	for doc, want := range map[string]bool{
		"view: {listen: '127.0.0.1:8765'}\n":                                                             true,
		"view: {listen: 'localhost:0'}\n":                                                                true,
		"view: {listen: '0.0.0.0:8765', allow_anonymous: true}\n":                                        true,
		"view: {listen: '127.0.0.1:8765', allow_anonymous: true, users: [{username: a, password: b}]}\n": true,
		"view: {listen: '127.0.0.1:8765', users: [{username: a, password: b}]}\n":                        false,
	} {
		require.Equal(t, want, mustParse(t, doc, nil).View.AnonymousAllowed(), doc)
	}
}

// TestViewOrigins: view.allowed_origins are kept in the form a browser
// sends in its Origin header, and anonymous_publish is off by default.
func TestViewOrigins(t *testing.T) {
	cfg := mustParse(t, "view:\n  listen: 127.0.0.1:8765\n  allowed_origins: ['HTTPS://App.Foxglove.dev:443/', 'http://[::1]:80', 'http://127.0.0.1:8080', 'app://lichtblick']\n", nil)
	require.Equal(t, []string{"https://app.foxglove.dev", "http://[::1]", "http://127.0.0.1:8080", "app://lichtblick"}, cfg.View.AllowedOrigins)
	require.False(t, cfg.View.AnonymousPublish)
	require.True(t, mustParse(t, "view: {listen: '127.0.0.1:8765', anonymous_publish: true}\n", nil).View.AnonymousPublish)
}

func TestViewErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		doc  string
		want []string
	}{
		{"open to the network", "view:\n  listen: 0.0.0.0:8765\n",
			[]string{`config.yaml:2: view.listen: "0.0.0.0:8765" is reachable from the network: name who may connect in view.users, or set allow_anonymous: true to let anyone in`}},
		{"not host:port", "view:\n  listen: 8765\n",
			[]string{`config.yaml:2: view.listen: must be host:port (e.g. 127.0.0.1:8765), not "8765"`}},
		{"users without listen", "view:\n  users: [{username: a, password: b}]\n  allow_anonymous: false\n",
			[]string{`config.yaml:2: view.users: only with view.listen`, `config.yaml:3: view.allow_anonymous: only with view.listen`}},
		{"incomplete users", "view:\n  listen: 127.0.0.1:8765\n  users:\n    - username: a\n    - password: p\n    - {username: a, password: q}\n",
			[]string{
				`config.yaml:4: view.users[0].password: required`,
				`config.yaml:5: view.users[1].username: required`,
				`config.yaml:6: view.users[2].username: duplicate user "a" (first at line 4)`,
			}},
		{"nobody", "view:\n  listen: 127.0.0.1:8765\n  allow_anonymous: false\n",
			[]string{`config.yaml:3: view.allow_anonymous: false with no view.users lets no viewer in: list the users`}},
		{"max_topics", "view:\n  listen: 127.0.0.1:8765\n  max_topics: -1\n",
			[]string{`config.yaml:3: view.max_topics: -1 is negative`}},
		{"max_topics without listen", "view:\n  max_topics: 5\n",
			[]string{`config.yaml:2: view.max_topics: only with view.listen`}},
		{"unknown key", "view:\n  listen: 127.0.0.1:8765\n  port: 8765\n",
			[]string{`config.yaml:3: view.port: unknown key (known keys: listen, users, allow_anonymous, max_topics, allowed_origins, anonymous_publish)`}},
		{"origins", "view:\n  listen: 127.0.0.1:8765\n  allowed_origins:\n    - https://app.foxglove.dev/path\n    - '*'\n    - app.foxglove.dev\n    - 'null'\n    - http://h:99999\n",
			[]string{
				`config.yaml:4: view.allowed_origins[0]: "https://app.foxglove.dev/path" is not an origin: want scheme://host[:port], with no path, query or credentials`,
				`config.yaml:5: view.allowed_origins[1]: "*" would let any page in: list the origins, scheme://host[:port]`,
				`config.yaml:6: view.allowed_origins[2]: "app.foxglove.dev" is not an origin: want scheme://host[:port] (e.g. https://app.foxglove.dev)`,
				`config.yaml:7: view.allowed_origins[3]: "null" would let any page in: list the origins, scheme://host[:port]`,
				`config.yaml:8: view.allowed_origins[4]: "http://h:99999": port "99999" is not from 1 to 65535`,
			}},
		{"origins and publish without listen", "view:\n  allowed_origins: [https://a.b]\n  anonymous_publish: true\n",
			[]string{`config.yaml:2: view.allowed_origins: only with view.listen`, `config.yaml:3: view.anonymous_publish: only with view.listen`}},
		{"anonymous publish with no anonymous viewers", "view:\n  listen: 127.0.0.1:8765\n  users: [{username: a, password: b}]\n  anonymous_publish: true\n",
			[]string{`config.yaml:4: view.anonymous_publish: true, but anonymous viewers are not let in: set allow_anonymous: true, or give view.users write filters`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse(t, tc.doc, nil)
			require.Equal(t, tc.want, lines(err))
		})
	}
}
