package testenv_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/testenv"
)

// fakeTB records how Missing ended a test.
type fakeTB struct{ fatal, skip string }

func (f *fakeTB) Helper()                           {}
func (f *fakeTB) Name() string                      { return "TestFake" }
func (f *fakeTB) Fatalf(format string, args ...any) { f.fatal = fmt.Sprintf(format, args...) }
func (f *fakeTB) Skipf(format string, args ...any)  { f.skip = fmt.Sprintf(format, args...) }

var absent = testenv.Program{Name: "robotexec-no-such-program", Install: "apt-get install -y nothing"}

func TestMissingSkips(t *testing.T) {
	t.Setenv(testenv.AllVar, "")
	var f fakeTB
	require.Empty(t, testenv.LookPath(&f, absent))
	require.Equal(t, "needs robotexec-no-such-program, not found: install it with `apt-get install -y nothing`", f.skip)
	require.Empty(t, f.fatal)
	require.Contains(t, testenv.Summary("pkg"),
		"pkg: 1 tests not run, robotexec-no-such-program not found: install it with `apt-get install -y nothing`\n")
}

func TestMissingFailsUnderTestAll(t *testing.T) {
	t.Setenv(testenv.AllVar, "1")
	var f fakeTB
	testenv.Missing(&f, absent, "PATH")
	require.Equal(t, "needs robotexec-no-such-program, not found (PATH): install it with `apt-get install -y nothing`; ROBOTEXEC_TEST_ALL=1 runs every test", f.fatal)
	require.Empty(t, f.skip)
}

func TestLookPathFinds(t *testing.T) {
	t.Setenv(testenv.AllVar, "1")
	var f fakeTB
	require.NotEmpty(t, testenv.LookPath(&f, testenv.Program{Name: "go", Install: "-"}))
	require.Empty(t, f.fatal)
}
