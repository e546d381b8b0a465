package config_test

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/robotexec/robotexec/internal/config"
)

// params parses a config whose only node has the given params, written at
// column 6, from line 5 on.
func params(t *testing.T, body string) config.Params {
	t.Helper()
	doc := "nodes:\n  - name: n\n    type: t\n    params:\n"
	for _, l := range strings.Split(strings.TrimSpace(body), "\n") {
		doc += "      " + l + "\n"
	}
	return mustParse(t, doc, nil).Nodes[0].Params
}

type Filter struct {
	Alpha float64       `yaml:"alpha"`
	Order int           `yaml:"order"`
	Every time.Duration `yaml:"every"`
}

type Common struct {
	Retain bool `yaml:"retain"`
}

type NodeParams struct {
	Input    string            `yaml:"input"`
	Output   string            `yaml:"output"`
	Alpha    float64           `yaml:"alpha"`
	Period   time.Duration     `yaml:"period"`
	Enabled  bool              `yaml:"enabled"`
	QoS      uint8             `yaml:"qos"`
	Topics   []string          `yaml:"topics"`
	Labels   map[string]string `yaml:"labels"`
	Filter   Filter            `yaml:"filter"`
	Chain    []Filter          `yaml:"chain"`
	Limit    *int              `yaml:"limit"`
	Extra    any               `yaml:"extra"`
	Level    slog.Level        `yaml:"level"`
	Addr     netip.Addr        `yaml:"addr"`
	Gains    [3]float32        `yaml:"gains"`
	Raw      []byte            `yaml:"raw"`
	ByID     map[int]string    `yaml:"by_id"`
	Common   `yaml:",inline"`
	Nothing  string `yaml:"-"`
	Untagged string
	hidden   string
}

func defaultParams() NodeParams {
	return NodeParams{
		Input:  "in",
		Alpha:  0.2,
		Period: 50 * time.Millisecond,
		QoS:    1,
		Topics: []string{"default"},
		Filter: Filter{Alpha: 0.9, Order: 2},
		hidden: "kept",
	}
}

func TestParamsDecode(t *testing.T) {
	p := params(t, `
output: imu/filtered
alpha: 0.5
period: 1m30s
enabled: on
qos: 2
topics: [a/+, b/#]
labels: {site: lab, "1": one}
filter:
  order: 4
  every: 2ms
chain:
  - {alpha: .5}
  - alpha: 1e-3
    order: 0x1F
limit: 10
extra: {a: [1, 2.5, true, null, x], b: ~}
level: warn
addr: 10.0.0.1
gains: [1, 2, .inf]
raw: bytes
by_id: {1: one, 0x10: sixteen}
retain: true
untagged: yes
`)
	got := defaultParams()
	require.NoError(t, p.Decode(&got))
	ten := 10
	want := defaultParams()
	want.Output = "imu/filtered"
	want.Alpha = 0.5
	want.Period = 90 * time.Second
	want.Enabled = true
	want.QoS = 2
	want.Topics = []string{"a/+", "b/#"}
	want.Labels = map[string]string{"site": "lab", "1": "one"}
	want.Filter = Filter{Alpha: 0.9, Order: 4, Every: 2 * time.Millisecond}
	want.Chain = []Filter{{Alpha: 0.5}, {Alpha: 0.001, Order: 31}}
	want.Limit = &ten
	want.Extra = map[string]any{"a": []any{1, 2.5, true, nil, "x"}, "b": nil}
	want.Level = slog.LevelWarn
	want.Addr = netip.MustParseAddr("10.0.0.1")
	want.Gains = [3]float32{1, 2, float32(inf())}
	want.Raw = []byte("bytes")
	want.ByID = map[int]string{1: "one", 16: "sixteen"}
	want.Retain = true
	want.Untagged = "yes"
	require.Equal(t, want, got)
	require.False(t, p.IsZero())
}

func inf() float64 { var z float64; return 1 / z }

func TestParamsDefaultsKept(t *testing.T) {
	for name, body := range map[string]string{
		"absent":       "",
		"null":         "~",
		"empty":        "{}",
		"null values":  "alpha: ~\nperiod:\ninput: null\nfilter: ~",
		"expanded nil": "alpha: ${UNSET:-}\nperiod: '${UNSET:-}'",
	} {
		t.Run(name, func(t *testing.T) {
			var p config.Params
			if body == "" {
				p = mustParse(t, "nodes: [{name: n, type: t}]", nil).Nodes[0].Params
			} else {
				p = params(t, body)
			}
			got := defaultParams()
			require.NoError(t, p.Decode(&got))
			require.Equal(t, defaultParams(), got)
			require.Equal(t, name != "null values" && name != "expanded nil", p.IsZero())
		})
	}
	// Null empties pointers, slices and maps, as in yaml.v3.
	got := defaultParams()
	got.Labels = map[string]string{"a": "b"}
	require.NoError(t, params(t, "topics: ~\nlabels:\nlimit: ~").Decode(&got))
	require.Nil(t, got.Topics)
	require.Nil(t, got.Labels)
	require.Nil(t, got.Limit)

	// A map is merged into; a list replaced.
	got = defaultParams()
	got.Labels = map[string]string{"a": "b"}
	require.NoError(t, params(t, "topics: [x]\nlabels: {c: d}").Decode(&got))
	require.Equal(t, []string{"x"}, got.Topics)
	require.Equal(t, map[string]string{"a": "b", "c": "d"}, got.Labels)

	var zero config.Params
	require.True(t, zero.IsZero())
	require.NoError(t, zero.Decode(&got))
}

func TestParamsErrors(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       []string
	}{
		{"unknown key", "inputs: a\ncolour: red",
			[]string{
				`config.yaml:5: nodes[0].params.inputs: unknown key; did you mean "input"?`,
				`config.yaml:6: nodes[0].params.colour: unknown key (known keys: input, output, alpha, period, enabled, qos, topics, labels, filter, chain, limit, extra, level, addr, gains, raw, by_id, retain, untagged)`,
			}},
		{"unknown nested key", "filter:\n  alfa: 1\nchain:\n  - {order: 1, ordre: 2}",
			[]string{
				`config.yaml:6: nodes[0].params.filter.alfa: unknown key; did you mean "alpha"?`,
				`config.yaml:8: nodes[0].params.chain[0].ordre: unknown key; did you mean "order"?`,
			}},
		{"not a duration", "period: fast\nfilter:\n  every: 5",
			[]string{
				`config.yaml:5: nodes[0].params.period: "fast" is not a duration`,
				`config.yaml:7: nodes[0].params.filter.every: "5" is not a duration (a duration needs a unit: 5ms, 5s, ...)`,
			}},
		{"not a number", "alpha: high\ngains: [1, x, 3]",
			[]string{
				`config.yaml:5: nodes[0].params.alpha: "high" is not a number`,
				`config.yaml:6: nodes[0].params.gains[1]: "x" is not a number`,
			}},
		{"not a boolean", "enabled: si",
			[]string{`config.yaml:5: nodes[0].params.enabled: "si" is not a boolean`}},
		{"integers", "qos: 256\nlimit: -x\nfilter: {order: 1.5}\nby_id: {x: a}",
			[]string{
				`config.yaml:5: nodes[0].params.qos: "256" is out of range (0 to 255)`,
				`config.yaml:6: nodes[0].params.limit: "-x" is not an integer`,
				`config.yaml:7: nodes[0].params.filter.order: "1.5" is not an integer`,
				`config.yaml:8: nodes[0].params.by_id.x: "x" is not an integer`,
			}},
		{"negative unsigned", "qos: -1",
			[]string{`config.yaml:5: nodes[0].params.qos: "-1" is out of range (0 to 255)`}},
		{"float32 range", "gains: [1e39, 0, 0]",
			[]string{`config.yaml:5: nodes[0].params.gains[0]: "1e39" is out of range for a 32-bit number`}},
		{"kinds", "topics: a/b\nlabels: [a]\nfilter: x\ninput: {a: b}\ngains: [1, 2]\nlevel: [a]",
			[]string{
				`config.yaml:5: nodes[0].params.topics: must be a list, not "a/b"`,
				`config.yaml:6: nodes[0].params.labels: must be a mapping, not a list`,
				`config.yaml:7: nodes[0].params.filter: must be a mapping, not "x"`,
				`config.yaml:8: nodes[0].params.input: must be a string, not a mapping`,
				`config.yaml:9: nodes[0].params.gains: must be a list of 3, not 2`,
				`config.yaml:10: nodes[0].params.level: must be a string, not a list`,
			}},
		{"alias", "topics: &a [1]\noutput: *a",
			[]string{`config.yaml:5: nodes[0].params.output: must be a string, not a list`}},
		{"text unmarshaler", "level: loud\naddr: 300.1.1.1",
			[]string{
				`config.yaml:5: nodes[0].params.level: slog: level string "loud": unknown name`,
				`config.yaml:6: nodes[0].params.addr: ParseAddr("300.1.1.1"): IPv4 field has value >255`,
			}},
		{"list of structs", "chain:\n  - alpha: a\n  - order: b\n  - 5",
			[]string{
				`config.yaml:6: nodes[0].params.chain[0].alpha: "a" is not a number`,
				`config.yaml:7: nodes[0].params.chain[1].order: "b" is not an integer`,
				`config.yaml:8: nodes[0].params.chain[2]: must be a mapping, not "5"`,
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := defaultParams()
			err := params(t, tc.body).Decode(&got)
			require.Equal(t, tc.want, lines(err))
			for _, e := range config.Errors(err) {
				require.Equal(t, "config.yaml", e.File)
			}
		})
	}
}

func TestParamsDecodeTargets(t *testing.T) {
	p := params(t, "a: 1\nb: [x, y]")

	var m map[string]any
	require.NoError(t, p.Decode(&m))
	require.Equal(t, map[string]any{"a": 1, "b": []any{"x", "y"}}, m)

	var a any
	require.NoError(t, p.Decode(&a))
	require.Equal(t, map[string]any{"a": 1, "b": []any{"x", "y"}}, a)

	var pp *struct {
		A int      `yaml:"a"`
		B []string `yaml:"b"`
	}
	require.NoError(t, p.Decode(&pp))
	require.Equal(t, 1, pp.A)
	require.Equal(t, []string{"x", "y"}, pp.B)

	var notPointer struct{}
	require.EqualError(t, p.Decode(notPointer), "config: Params.Decode needs a non-nil pointer, not struct {}")
	require.Error(t, p.Decode(nil))
	require.Error(t, p.Decode((*struct{})(nil)))

	var unsupported struct {
		A chan int     `yaml:"a"`
		B fmt.Stringer `yaml:"b"`
	}
	require.Equal(t, []string{
		"config.yaml:5: nodes[0].params.a: cannot decode into chan int",
		"config.yaml:6: nodes[0].params.b: cannot decode into fmt.Stringer",
	}, lines(p.Decode(&unsupported)))
}

func TestParamsOddKeys(t *testing.T) {
	// Keys that would make a path ambiguous or span lines are quoted.
	var m map[string]int
	err := params(t, "\"a.b\": x\nmy key: y\n\"l\\n2\": z\nok: 1").Decode(&m)
	require.Equal(t, []string{
		`config.yaml:5: nodes[0].params."a.b": "x" is not an integer`,
		`config.yaml:6: nodes[0].params."my key": "y" is not an integer`,
		`config.yaml:7: nodes[0].params."l\n2": "z" is not an integer`,
	}, lines(err))
	require.Equal(t, 1, m["ok"])
}

func TestParamsNumbers(t *testing.T) {
	var got struct {
		I   int     `yaml:"i"`
		I8  int8    `yaml:"i8"`
		U64 uint64  `yaml:"u64"`
		F   float64 `yaml:"f"`
		NaN float64 `yaml:"nan"`
		Neg float64 `yaml:"neg"`
		Big any     `yaml:"big"`
		Int any     `yaml:"int"`
	}
	require.NoError(t, params(t, "i: 1_000\ni8: -128\nu64: 18446744073709551615\nf: 3\nnan: .nan\nneg: -.inf\nbig: 18446744073709551615\nint: 0o17").Decode(&got))
	require.Equal(t, 1000, got.I)
	require.Equal(t, int8(-128), got.I8)
	require.Equal(t, uint64(18446744073709551615), got.U64)
	require.Equal(t, 3.0, got.F)
	require.NotEqual(t, got.NaN, got.NaN)
	require.Equal(t, -inf(), got.Neg)
	require.Equal(t, uint64(18446744073709551615), got.Big)
	require.Equal(t, 15, got.Int)
	require.Equal(t, []string{`config.yaml:5: nodes[0].params.i8: "128" is out of range (-128 to 127)`},
		lines(params(t, "i8: 128").Decode(&got)))
}

func TestParamsMergeKeys(t *testing.T) {
	cfg := mustParse(t, `
nodes:
  - name: a
    type: t
    params: &base
      alpha: 0.5
      filter: {order: 3}
  - name: b
    type: t
    params:
      <<: *base
      alpha: 0.7
  - name: c
    type: t
    params:
      <<: [{output: o}, *base, {output: p}]
`, nil)
	var b, c NodeParams
	require.NoError(t, cfg.Nodes[1].Params.Decode(&b))
	require.Equal(t, 0.7, b.Alpha)
	require.Equal(t, 3, b.Filter.Order)
	require.NoError(t, cfg.Nodes[2].Params.Decode(&c))
	require.Equal(t, "o", c.Output)
	require.Equal(t, 0.5, c.Alpha)

	// Duplicate keys in params are reported by Parse.
	_, err := parse(t, "nodes:\n  - name: a\n    type: t\n    params:\n      x: 1\n      x: 2\n", nil)
	require.Equal(t, []string{"config.yaml:6: nodes[0].params.x: duplicate key (first at line 5)"}, lines(err))
}

type celsius float64

func (c *celsius) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return err
	}
	v, ok := strings.CutSuffix(s, "C")
	if !ok {
		return errors.New("temperature needs a unit")
	}
	_, err := fmt.Sscan(v, (*float64)(c))
	return err
}

func TestParamsYAMLUnmarshaler(t *testing.T) {
	var got struct {
		Max celsius `yaml:"max"`
		Min celsius `yaml:"min"`
	}
	err := params(t, "max: ${T:-80C}\nmin: 5").Decode(&got)
	require.Equal(t, celsius(80), got.Max)
	require.Equal(t, []string{"config.yaml:6: nodes[0].params.min: temperature needs a unit"}, lines(err))
}

func TestParamsConcurrentDecode(t *testing.T) {
	p := params(t, "alpha: 0.5\nchain: [{order: 1}, {order: 2}]")
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			got := defaultParams()
			if err := p.Decode(&got); err != nil || got.Alpha != 0.5 || len(got.Chain) != 2 {
				errs <- fmt.Errorf("decode: %v, %+v", err, got)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}
