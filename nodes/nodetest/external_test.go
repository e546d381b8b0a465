package nodetest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A node package of a module of its own, as a user writes one.
const (
	externalNode = `// Package counter counts the messages on a topic.
package counter

import (
	"context"
	"time"

	"github.com/robotexec/robotexec/nodes"
	"github.com/robotexec/robotexec/subscribers"
	"github.com/robotexec/robotexec/timers"
)

func init() { nodes.Register("mybot_counter", "counts messages", New) }

// New builds a counter node.
func New(n *nodes.Node) error {
	p := struct {
		Input  string        ` + "`yaml:\"input\"`" + `
		Output string        ` + "`yaml:\"output\"`" + `
		Period time.Duration ` + "`yaml:\"period\"`" + `
	}{Period: time.Second}
	if err := n.Params(&p); err != nil {
		return err
	}
	out := n.Publisher(p.Output)
	count := 0
	n.Subscribe(p.Input, func(ctx context.Context, _ subscribers.Message) { count++ })
	n.Timer(p.Period, func(ctx context.Context, _ timers.Event) { out.PublishJSON(ctx, count) })
	return nil
}
`
	externalTest = `package counter_test

import (
	"testing"
	"time"

	_ "example.com/mybot/counter"
	"github.com/robotexec/robotexec/nodes/nodetest"
)

func TestCounter(t *testing.T) {
	r := nodetest.New(t)
	r.MustBuild("count", "mybot_counter", "{ input: in, output: count, period: 1s }")
	r.Publish("in", "a", "b")
	r.Advance(time.Second)
	r.Publish("in", "c")
	r.Advance(time.Second)
	got := nodetest.PublishedJSON[int](r, "count")
	if len(got) != 2 || got[0] != 2 || got[1] != 3 {
		t.Fatalf("published %v, want [2 3]", got)
	}
}
`
)

// Node packages in a module outside this one, which requires this one
// through a replace line, test their nodes with nodetest: a counter, and
// the node of the README's "Your first node" and its test in
// docs/nodes.md, as they are there. Only public packages are importable there: the same test
// importing an internal package does not build. Nothing is downloaded:
// the module cache holds every dependency (GOPROXY=off), and go.sum is
// this module's.
func TestExternalModuleImportsNodetest(t *testing.T) {
	goBin, err := exec.LookPath("go")
	require.NoError(t, err, "the go command")
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		path := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	}
	write("go.mod", "module example.com/mybot\n\ngo "+goVersion(t, root)+"\n\n"+
		"require github.com/robotexec/robotexec v0.0.0\n\n"+
		"replace github.com/robotexec/robotexec => "+root+"\n")
	write("go.sum", string(sum))
	write("counter/counter.go", externalNode)
	write("counter/counter_test.go", externalTest)
	write("imufilter/imufilter.go", docBlock(t, root, "README.md", "package imufilter\n"))
	write("imufilter/imufilter_test.go", docBlock(t, root, "docs/nodes.md", "package imufilter_test\n"))

	goTest := func() (string, error) {
		cmd := exec.Command(goBin, "test", "-count=1", "-v", "./...")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	start := time.Now()
	out, err := goTest()
	require.NoError(t, err, out)
	require.Contains(t, out, "--- PASS: TestCounter")
	require.Contains(t, out, "--- PASS: TestFilterBlends")
	t.Logf("go test in the external module: %v", time.Since(start).Round(time.Millisecond))

	write("counter/counter_test.go", strings.Replace(externalTest, "/nodes/nodetest\"",
		"/nodes/nodetest\"\n\t_ \"github.com/robotexec/robotexec/internal/syncbuf\"", 1))
	out, err = goTest()
	require.Error(t, err, out)
	require.Contains(t, out, "use of internal package")
}

// goVersion returns the go line of the module at root.
func goVersion(t *testing.T, root string) string {
	t.Helper()
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	require.NoError(t, err)
	for _, line := range strings.Split(string(mod), "\n") {
		if v, ok := strings.CutPrefix(line, "go "); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatal("go.mod has no go line")
	return ""
}

// docBlock returns the Go block of page, a path from the root, that starts
// with first.
func docBlock(t *testing.T, root, page, first string) string {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(root, page))
	require.NoError(t, err)
	for _, part := range strings.Split(string(text), "```go\n")[1:] {
		if block, _, _ := strings.Cut(part, "\n```"); strings.HasPrefix(block, first) {
			return block + "\n"
		}
	}
	t.Fatalf("%s has no go block that starts with %q", page, first)
	return ""
}
