package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/robotexec/robotexec/internal/config"
)

// FuzzParse checks that Parse never panics, returns a config or an error
// (or both), reports only located *Errors of the file in line order, and
// that a config without error holds valid values whose params decode
// without panicking.
func FuzzParse(f *testing.F) {
	full, err := os.ReadFile(filepath.Join("testdata", "full.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(full)
	for _, s := range []string{
		"",
		"nodes: []\n",
		"executor: {workers: 2, queue_depth: 5, overflow: block}\n",
		"mqtt:\n  broker: tcp://u:p@h:1883\n  username: ${U:-x}\n  password: $$ecret\n",
		"mqtt: {broker: ssl://h:8883, tls: {ca: ca.pem, cert: c.pem}}\n",
		"nodes:\n  - name: a\n    type: t\n    params: &p {x: 1, y: [a, b], z: {k: v}}\n  - {name: b, type: t, params: {<<: *p, x: 2}}\n",
		"nodes:\n  - name: a\n    type: t\n  - name: a\n",
		"a: &a [*a]\n",
		"nodes: &n [{name: a, type: t, params: {x: *n}}]\n",
		"x: [\n",
		"- a\n",
		"nodes:\n  - name: a\n    type: t\n    params:\n      period: ${P:-5s}\n      d: ${D}\n",
		"executor:\n  workers: ${N}\n---\nb: 1\n",
		"? [a]\n: b\n",
		"executor:\n  <<: [{workers: 1}, {queue_depth: 2}]\n",
	} {
		f.Add([]byte(s))
	}
	vars := map[string]string{"N": "3", "U": "user", "HOSTNAME": "fuzz", "EMPTY": ""}
	lookup := func(k string) (string, bool) { v, ok := vars[k]; return v, ok }

	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := config.Parse("fuzz.yaml", data, lookup)
		if cfg == nil && err == nil {
			t.Fatal("no config and no error")
		}
		if err != nil {
			checkErrors(t, err)
			cfg2, err2 := config.Parse("fuzz.yaml", data, lookup)
			if (cfg2 == nil) != (cfg == nil) || err2 == nil || err2.Error() != err.Error() {
				t.Fatalf("not deterministic:\n%v\n%v", err, err2)
			}
		}
		if cfg == nil {
			if n := len(config.Errors(err)); n != 1 {
				t.Fatalf("no config, %d errors: %v", n, err)
			}
			return
		}
		if err == nil {
			checkValid(t, cfg)
		}
		for _, n := range cfg.Nodes {
			var m map[string]any
			if err := n.Params.Decode(&m); err != nil {
				checkErrors(t, err)
			}
			var s struct {
				Topic   string            `yaml:"topic"`
				Period  time.Duration     `yaml:"period"`
				Rate    float64           `yaml:"max_rate"`
				QoS     uint8             `yaml:"qos"`
				JSON    bool              `yaml:"json"`
				List    []string          `yaml:"list"`
				Map     map[string]int    `yaml:"map"`
				Nested  *struct{ X int }  `yaml:"nested"`
				Any     any               `yaml:"any"`
				Filters []map[string]any  `yaml:"filters"`
				Labels  map[string]string `yaml:"labels"`
			}
			if err := n.Params.Decode(&s); err != nil {
				checkErrors(t, err)
			}
			_ = n.Errorf("type", "unknown node type %q", n.Type).Error()
		}
	})
}

func checkErrors(t *testing.T, err error) {
	t.Helper()
	errs := config.Errors(err)
	if len(errs) == 0 || len(errs) != strings.Count(err.Error(), "\n")+1 {
		t.Fatalf("%d *Errors in %q", len(errs), err)
	}
	for _, e := range errs {
		if e.File != "fuzz.yaml" || e.Msg == "" || !strings.HasPrefix(e.Error(), "fuzz.yaml") {
			t.Fatalf("bad error %#v", e)
		}
	}
	if !slices.IsSortedFunc(errs, func(a, b *config.Error) int { return a.Line - b.Line }) {
		t.Fatalf("errors out of line order: %v", err)
	}
	var target *config.Error
	if !errors.As(err, &target) {
		t.Fatalf("errors.As finds no *Error in %v", err)
	}
}

func checkValid(t *testing.T, cfg *config.Config) {
	t.Helper()
	e, m := cfg.Executor, cfg.MQTT
	switch {
	case e.Workers < 0, e.QueueDepth < 1, m.QoS < 0, m.QoS > 2:
		t.Fatalf("invalid numbers: %+v %+v", e, m)
	case e.Overflow != "" && e.Overflow != config.OverflowDropOldest && e.Overflow != config.OverflowDropNewest && e.Overflow != config.OverflowBlock:
		t.Fatalf("invalid overflow %q", e.Overflow)
	case m.Protocol != config.Protocol5 && m.Protocol != config.Protocol311, m.SessionExpiry < 0, m.MaxConnections < 1:
		t.Fatalf("invalid session: %+v", m)
	case m.Broker == "" || m.Listen == "" || m.ClientID == "":
		t.Fatalf("missing defaults: %+v", m)
	case m.TLS != nil && (m.TLS.Cert == "") != (m.TLS.Key == ""):
		t.Fatalf("cert without key: %+v", m.TLS)
	}
	names := map[string]bool{}
	for i, n := range cfg.Nodes {
		if n.Name == "" || n.Type == "" || names[n.Name] || n.Index != i || n.Line < 1 {
			t.Fatalf("invalid node %d: %+v", i, n)
		}
		names[n.Name] = true
	}
}
