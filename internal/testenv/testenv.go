package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// AllVar names the environment variable under which a test that needs a
// missing program fails instead of skipping: ROBOTEXEC_TEST_ALL=1.
const AllVar = "ROBOTEXEC_TEST_ALL"

// TB is what the functions need of a test: testing.TB has it, and so do
// the test doubles of the packages that check their own use of Missing.
type TB interface {
	Helper()
	Name() string
	Fatalf(format string, args ...any)
	Skipf(format string, args ...any)
}

// Program names a program outside Go that tests need, and the command
// that installs it on Debian.
type Program struct {
	// Name is the program's command, looked up on PATH.
	Name string
	// Install is the command that installs it, such as
	// "apt-get install -y mosquitto".
	Install string
}

// The programs the tests need. .ci/run installs each of them.
var (
	Mosquitto = Program{"mosquitto", "apt-get install -y mosquitto"}
	Chromium  = Program{"chromium", "apt-get install -y chromium"}
	Spin      = Program{"spin", "apt-get install -y spin gcc"}
	GCC       = Program{"gcc", "apt-get install -y gcc"}
	Node      = Program{"node", "apt-get install -y nodejs npm"}
	NPM       = Program{"npm", "apt-get install -y npm"}
	// Ejabberd is Debian's ejabberd, an MQTT 5 broker that clusters;
	// its ejabberdctl is looked up (in /usr/sbin).
	Ejabberd = Program{"ejabberdctl", "apt-get install -y ejabberd"}
)

// All reports whether ROBOTEXEC_TEST_ALL=1: no test may skip.
func All() bool { return os.Getenv(AllVar) == "1" }

// Missing ends t, which needs p and cannot find it: a skip naming p's
// install, or, when All, a failure. why may add what was looked for.
func Missing(t TB, p Program, why string) {
	t.Helper()
	if why != "" {
		why = " (" + why + ")"
	}
	if All() {
		t.Fatalf("needs %s, not found%s: install it with `%s`; %s=1 runs every test", p.Name, why, p.Install, AllVar)
		return
	}
	record(p, t.Name())
	t.Skipf("needs %s, not found%s: install it with `%s`", p.Name, why, p.Install)
}

// LookPath returns the path of p on PATH, or ends t as Missing does.
func LookPath(t TB, p Program) string {
	t.Helper()
	path, err := exec.LookPath(p.Name)
	if err != nil {
		Missing(t, p, "")
		return ""
	}
	return path
}

var skipped = struct {
	sync.Mutex
	tests map[Program][]string
}{tests: map[Program][]string{}}

func record(p Program, test string) {
	skipped.Lock()
	defer skipped.Unlock()
	skipped.tests[p] = append(skipped.tests[p], test)
}

// Summary returns one line per program whose absence skipped tests of
// this test binary, naming how many and the install, in the order of the
// programs' names; it is empty when nothing was skipped.
func Summary(pkg string) string {
	skipped.Lock()
	defer skipped.Unlock()
	var ps []Program
	for p := range skipped.tests {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].Name < ps[j].Name })
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&b, "%s: %d tests not run, %s not found: install it with `%s`\n", pkg, len(skipped.tests[p]), p.Name, p.Install)
	}
	return b.String()
}

// Run runs m's tests, then writes Summary to the terminal (when there is
// one: go test shows nothing else of a passing package), and returns the
// tests' exit code. A package's TestMain calls it:
//
//	func TestMain(m *testing.M) { os.Exit(testenv.Run(m)) }
func Run(m *testing.M) int {
	code := m.Run()
	if s := Summary(packageDir()); s != "" {
		if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
			fmt.Fprint(tty, s)
			tty.Close()
		}
	}
	return code
}

// packageDir returns the test's package directory relative to the
// module's root: go test runs a test binary in its package's directory.
func packageDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return "?"
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			rel, err := filepath.Rel(dir, wd)
			if err != nil || rel == "." {
				return "robotexec"
			}
			return rel
		}
		if filepath.Dir(dir) == dir {
			return wd
		}
	}
}
