//go:build unix

package robotexec_test

// The documentation tests: every ```sh block of README.md and docs/*.md
// runs, from the repository root, with the binary that TestMain built
// first on PATH, and every relative link of the pages resolves. See
// docblocks_test.go for how a page marks its blocks.

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// notRunHere are the blocks that the pages mark as not runnable on a test
// machine, by page and first command. The test fails when the marks and
// this list differ, so that no block is left out silently.
var notRunHere = map[string][]string{
	"README.md": {
		"go install github.com/robotexec/robotexec/cmd/robotexec@latest", // the network
		"git clone https://github.com/robotexec/robotexec",               // the network
		"go test -race ./...", // this test is part of it
	},
	"docs/development.md": {
		"go test -race ./...", // this test is part of it
		".ci/run",             // apt-get, and the whole suite
	},
	"docs/performance.md": {
		"robotexec bench", // 2 minutes on every core
		"go test ./internal/observers -run - -bench Overhead -benchtime 2000000x -count 3", // every core
		"robotexec bench -only reference -repeat 1 -budget 2s",                             // 25 s on every core; TestBenchSmokeJSON runs the group
	},
	"docs/security.md": {
		"MQTT_PASSWORD=... robotexec echo -broker ssl://broker.example.net:8883 -username robot1 -ca ca.pem -cert client.pem -key client.key 'robot/#'", // a TLS broker
	},
}

// docPages returns README.md and the pages of docs/, relative to the
// repository root (the directory of the root package's tests).
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("docs/*.md")
	require.NoError(t, err)
	require.NotEmpty(t, pages, "docs/*.md")
	slices.Sort(pages)
	return append([]string{"README.md"}, pages...)
}

// pageBlocks parses every page, failing the test on a problem of form.
func pageBlocks(t *testing.T, pages []string) map[string][]docBlock {
	t.Helper()
	all := map[string][]docBlock{}
	for _, page := range pages {
		data, err := os.ReadFile(page)
		require.NoError(t, err)
		blocks, errs := parseBlocks(page, string(data))
		for _, err := range errs {
			t.Error(err)
		}
		all[page] = blocks
	}
	if t.Failed() {
		t.FailNow()
	}
	return all
}

// TestDocCommands runs the shell blocks of every page in order, a page's
// background commands (a second terminal) stopped with SIGINT at its end.
func TestDocCommands(t *testing.T) {
	t.Parallel()
	pages := docPages(t)
	blocks := pageBlocks(t, pages)

	marked := map[string][]string{}
	for _, page := range pages {
		for _, b := range blocks[page] {
			if b.mode == notRun {
				marked[page] = append(marked[page], b.commands()[0])
				t.Logf("not run: %s: %s (%s)", b, b.commands()[0], b.reason)
			}
		}
	}
	require.Equal(t, notRunHere, marked, "the blocks marked <!-- doc-test: not run, ... --> and notRunHere differ")

	lockDocCommands(t)
	env := docEnv(t)
	for _, page := range pages {
		t.Run(page, func(t *testing.T) { runPage(t, page, blocks[page], env) })
	}
}

// runPage runs the shell blocks of one page.
func runPage(t *testing.T, page string, blocks []docBlock, env []string) {
	before := rootEntries(t)
	var bg []*docProc
	defer func() {
		for _, p := range bg {
			p.kill()
		}
		removeCreated(t, page, before) // also when a block failed
	}()
	for _, b := range blocks {
		switch {
		case b.mode == notShell || b.mode == notRun:
			continue
		case b.afterInt:
			stopAll(t, bg)
			bg = nil
		}
		start := time.Now()
		if strings.HasPrefix(b.commands()[0], "mosquitto ") {
			env = withMosquitto(t, env)
		}
		switch b.mode {
		case background:
			if len(bg) == 0 {
				waitDocPortsFree(t)
			}
			bg = append(bg, startBackground(t, b, env))
		case foreground:
			runForeground(t, b, env)
		}
		t.Logf("%s: %s (%d lines): %v", b, b.commands()[0], len(b.commands()), time.Since(start).Round(time.Millisecond))
	}
	stopAll(t, bg)
	bg = nil
}

// rootEntries returns the names in the repository root.
func rootEntries(t *testing.T) map[string]bool {
	t.Helper()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Error(err)
	}
	names := map[string]bool{}
	for _, e := range entries {
		names[e.Name()] = true
	}
	return names
}

// removeCreated removes what the page's commands wrote into the
// repository root: the new entries that the page names. Anything else new
// is reported, not touched. It runs deferred, after a failure too, so it
// reports with t.Error only.
func removeCreated(t *testing.T, page string, before map[string]bool) {
	t.Helper()
	data, err := os.ReadFile(page)
	if err != nil {
		t.Error(err)
		return
	}
	for name := range rootEntries(t) {
		switch {
		case before[name]:
		case strings.Contains(string(data), name):
			if err := os.RemoveAll(name); err != nil {
				t.Error(err)
			}
		default:
			t.Errorf("the commands of %s left %s in the repository root, and the page does not name it", page, name)
		}
	}
}

// TestDocLinks checks that every relative link of the pages leads to a
// file of the repository (and to a heading of it, for an anchor), that
// every page of docs/ links back to the README, and that the README links
// to every page.
func TestDocLinks(t *testing.T) {
	t.Parallel()
	pages := docPages(t)
	anchors := map[string]map[string]bool{}
	links := map[string][]docLink{}
	for _, page := range pages {
		data, err := os.ReadFile(page)
		require.NoError(t, err)
		links[page], anchors[page] = linksAndAnchors(string(data))
	}
	linked := map[string]map[string]bool{}
	for _, page := range pages {
		linked[page] = map[string]bool{}
		for _, l := range links[page] {
			if strings.Contains(l.target, "://") || strings.HasPrefix(l.target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(l.target, "#")
			target := page
			if path != "" {
				target = filepath.Join(filepath.Dir(page), path)
			}
			linked[page][target] = true
			if _, err := os.Stat(target); err != nil {
				t.Errorf("%s:%d: link %s: %v", page, l.line, l.target, err)
				continue
			}
			if anchor != "" && strings.HasSuffix(target, ".md") && !anchors[target][anchor] {
				if anchors[target] == nil {
					t.Errorf("%s:%d: link %s: %s is not one of the pages checked", page, l.line, l.target, target)
				} else {
					t.Errorf("%s:%d: link %s: %s has no heading #%s", page, l.line, l.target, target, anchor)
				}
			}
		}
	}
	for _, page := range pages[1:] {
		require.True(t, linked["README.md"][page], "README.md should link to %s", page)
		require.True(t, linked[page]["README.md"], "%s should link back to the README", page)
	}
}
