package robotexec_test

// The Markdown side of the documentation tests: the fenced blocks of a
// page, the doc-test directives before them, its headings and its links.
//
// Every fence names its language. A shell fence is ```sh (no other shell
// name is accepted, so that no command hides from the tests); the test
// runs it, with /bin/sh -e, unless an HTML comment on the line before says
// otherwise:
//
//	<!-- doc-test: not run, REASON -->        not run here; the test lists it
//	<!-- doc-test: background, until "TEXT" --> one command, left running (a
//	                                            second terminal) once it printed TEXT
//	<!-- doc-test: after Ctrl-C -->            runs once the page's background
//	                                            commands were stopped with SIGINT

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"
)

// blockMode is how the documentation test treats a fenced block.
type blockMode int

const (
	notShell   blockMode = iota // code or output, not a command
	foreground                  // run; must exit 0
	background                  // started; stopped with SIGINT at the end
	notRun                      // cannot run here; listed by the test
)

// docBlock is one fenced block of a Markdown page.
type docBlock struct {
	file     string // the page, relative to the repository root
	line     int    // the line of the opening fence, from 1
	lang     string // the first word of the fence's info string
	text     string // the content, without the fence's indentation
	mode     blockMode
	until    string // background: the output that says it is ready
	reason   string // notRun: why
	afterInt bool   // foreground: runs after the background commands stopped
}

func (b docBlock) String() string { return fmt.Sprintf("%s:%d", b.file, b.line) }

// commands returns the block's lines that are neither blank nor comments.
func (b docBlock) commands() []string {
	var cmds []string
	for _, l := range strings.Split(b.text, "\n") {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
			cmds = append(cmds, t)
		}
	}
	return cmds
}

// shellNames are info strings that would be shell sessions under another
// name than sh: refused, so that the tests see every command.
var shellNames = map[string]bool{"bash": true, "shell": true, "console": true, "zsh": true, "shell-session": true, "sh-session": true}

var (
	fenceRE     = regexp.MustCompile("^( *)(```+|~~~+)(.*)$")
	directiveRE = regexp.MustCompile(`^<!--\s*doc-test:\s*(.*?)\s*-->$`)
	untilRE     = regexp.MustCompile(`^background,\s*until\s+"([^"]+)"$`)
)

// parseBlocks returns the fenced blocks of the page file with their
// directives, and every problem of form it finds.
func parseBlocks(file, text string) ([]docBlock, []error) {
	var (
		blocks    []docBlock
		errs      []error
		directive string // the directive on the last non-blank line, if any
		dirLine   int
	)
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if m := directiveRE.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			directive, dirLine = m[1], i+1
			continue
		}
		indent, fence, info, ok := fenceOpen(line)
		if !ok {
			if strings.TrimSpace(line) != "" {
				if directive != "" {
					errs = append(errs, fmt.Errorf("%s:%d: a doc-test directive must stand just before a fence", file, dirLine))
				}
				directive = ""
			}
			continue
		}
		b := docBlock{file: file, line: i + 1}
		if f := strings.Fields(info); len(f) > 0 {
			b.lang = f[0]
		}
		var body []string
		closed := false
		for i++; i < len(lines); i++ {
			t := strings.TrimSpace(lines[i])
			if strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == "" {
				closed = true
				break
			}
			body = append(body, trimIndent(lines[i], indent))
		}
		b.text = strings.Join(body, "\n")
		if !closed {
			errs = append(errs, fmt.Errorf("%s: the fence is not closed", b))
		}
		if err := b.classify(directive); err != nil {
			errs = append(errs, err)
		}
		directive = ""
		blocks = append(blocks, b)
	}
	return blocks, errs
}

// classify sets the block's mode from its language and directive.
func (b *docBlock) classify(directive string) error {
	switch {
	case b.lang == "":
		return fmt.Errorf("%s: the fence names no language (```sh for commands, ```text for output)", b)
	case shellNames[b.lang]:
		return fmt.Errorf("%s: a shell block is ```sh, not ```%s", b, b.lang)
	case b.lang != "sh":
		if directive != "" {
			return fmt.Errorf("%s: a doc-test directive before a ```%s block", b, b.lang)
		}
		b.mode = notShell
		return nil
	}
	if len(b.commands()) == 0 {
		return fmt.Errorf("%s: a ```sh block with no command", b)
	}
	b.mode = foreground
	switch m := untilRE.FindStringSubmatch(directive); {
	case directive == "":
	case m != nil:
		b.mode, b.until = background, m[1]
		if len(b.commands()) != 1 {
			return fmt.Errorf("%s: a background block holds one command", b)
		}
	case strings.HasPrefix(directive, "not run,"):
		b.mode, b.reason = notRun, strings.TrimSpace(strings.TrimPrefix(directive, "not run,"))
		if b.reason == "" {
			return fmt.Errorf("%s: say why a block is not run", b)
		}
	case directive == "after Ctrl-C":
		b.afterInt = true
	default:
		return fmt.Errorf("%s: unknown doc-test directive %q", b, directive)
	}
	return nil
}

// fenceOpen reports whether line opens a fenced block, as CommonMark
// says: three or more backticks or tildes, and for backticks an info
// string without a backtick (so that inline code such as ```“ ```sh ```“
// at the start of a line opens nothing).
func fenceOpen(line string) (indent int, fence, info string, ok bool) {
	m := fenceRE.FindStringSubmatch(line)
	if m == nil || (m[2][0] == '`' && strings.Contains(m[3], "`")) {
		return 0, "", "", false
	}
	return len(m[1]), m[2], strings.TrimSpace(m[3]), true
}

// trimIndent removes up to n leading spaces: a fence inside a list item
// is indented, and so is its content.
func trimIndent(line string, n int) string {
	i := 0
	for i < n && i < len(line) && line[i] == ' ' {
		i++
	}
	return line[i:]
}

// docLink is a link or an image of a page.
type docLink struct {
	line   int
	target string
}

var (
	linkRE       = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	codeSpanRE   = regexp.MustCompile("`[^`]*`")
	headingRE    = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	notSlugChars = func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == ' ' || r == '-' || r == '_')
	}
)

// linksAndAnchors returns the links of a page outside code, and the
// anchors of its headings as GitHub makes them.
func linksAndAnchors(text string) ([]docLink, map[string]bool) {
	var links []docLink
	anchors := map[string]bool{}
	seen := map[string]int{}
	inFence := ""
	for i, line := range strings.Split(text, "\n") {
		if _, fence, info, ok := fenceOpen(line); ok {
			switch {
			case inFence == "":
				inFence = fence
			case strings.HasPrefix(fence, inFence) && info == "":
				inFence = ""
			}
			continue
		}
		if inFence != "" {
			continue
		}
		if m := headingRE.FindStringSubmatch(line); m != nil {
			slug := strings.ReplaceAll(strings.Map(func(r rune) rune {
				if notSlugChars(r) {
					return -1
				}
				return unicode.ToLower(r)
			}, m[1]), " ", "-")
			if n := seen[slug]; n > 0 {
				anchors[fmt.Sprintf("%s-%d", slug, n)] = true
			} else {
				anchors[slug] = true
			}
			seen[slug]++
		}
		for _, m := range linkRE.FindAllStringSubmatch(codeSpanRE.ReplaceAllString(line, ""), -1) {
			links = append(links, docLink{line: i + 1, target: m[1]})
		}
	}
	return links, anchors
}

// TestParseBlocks checks how pages are read: what runs, what does not,
// and the problems of form that fail the documentation test.
func TestParseBlocks(t *testing.T) {
	t.Parallel()
	page := strings.Join([]string{
		"Text with ```` ```sh ```` inline, which opens nothing.",
		"```sh",
		"robotexec nodes",
		"```",
		"<!-- doc-test: background, until \"robotexec running\" -->",
		"```sh",
		"# the demo",
		"robotexec run examples/config.yaml",
		"```",
		"- a list item:",
		"",
		"  <!-- doc-test: after Ctrl-C -->",
		"  ```sh",
		"  robotexec validate x.yaml",
		"  ```",
		"<!-- doc-test: not run, the network -->",
		"```sh",
		"go install example.com/x@latest",
		"```",
		"```yaml",
		"nodes: []",
		"```",
	}, "\n")
	blocks, errs := parseBlocks("p.md", page)
	require.Empty(t, errs)
	require.Len(t, blocks, 5)
	want := []docBlock{
		{line: 2, lang: "sh", mode: foreground},
		{line: 6, lang: "sh", mode: background, until: "robotexec running"},
		{line: 13, lang: "sh", mode: foreground, afterInt: true},
		{line: 17, lang: "sh", mode: notRun, reason: "the network"},
		{line: 20, lang: "yaml", mode: notShell},
	}
	for i, w := range want {
		b := blocks[i]
		require.Equal(t, []any{w.line, w.lang, w.mode, w.until, w.reason, w.afterInt},
			[]any{b.line, b.lang, b.mode, b.until, b.reason, b.afterInt}, "block %d", i)
	}
	require.Equal(t, "robotexec validate x.yaml", blocks[2].text, "the list item's indentation is removed")

	for name, bad := range map[string]string{
		"no language":        "```\nls\n```",
		"another shell name": "```bash\nls\n```",
		"directive on code":  "<!-- doc-test: after Ctrl-C -->\n```go\nx := 1\n```",
		"unknown directive":  "<!-- doc-test: sometimes -->\n```sh\nls\n```",
		"no reason":          "<!-- doc-test: not run, -->\n```sh\nls\n```",
		"two in background":  "<!-- doc-test: background, until \"x\" -->\n```sh\nls\nls\n```",
		"stray directive":    "<!-- doc-test: after Ctrl-C -->\ntext\n```sh\nls\n```",
		"unclosed":           "```sh\nls\n",
	} {
		_, errs := parseBlocks("p.md", bad)
		require.NotEmpty(t, errs, name)
	}
}

func TestLinksAndAnchors(t *testing.T) {
	t.Parallel()
	links, anchors := linksAndAnchors(strings.Join([]string{
		"# Where messages can be lost",
		"## `robotexec bench`",
		"## Where messages can be lost",
		"See [a](docs/a.md#x), ![pic](trace.png) and `[not](a link)`.",
		"```text",
		"[inside](code.md)",
		"```",
	}, "\n"))
	require.Equal(t, []docLink{{4, "docs/a.md#x"}, {4, "trace.png"}}, links)
	for _, a := range []string{"where-messages-can-be-lost", "robotexec-bench", "where-messages-can-be-lost-1"} {
		require.True(t, anchors[a], "anchor %s in %v", a, anchors)
	}
}
