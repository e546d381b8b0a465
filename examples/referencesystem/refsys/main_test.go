package refsys_test

import (
	"os"
	"testing"

	"github.com/robotexec/robotexec/examples/referencesystem/refsys"
)

func TestMain(m *testing.M) {
	refsys.Register()
	refsys.Register() // a second call does nothing
	os.Exit(m.Run())
}
