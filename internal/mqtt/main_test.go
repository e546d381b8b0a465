package mqtt_test

import (
	"os"
	"testing"

	"github.com/robotexec/robotexec/internal/testenv"
)

// TestMain says, on a terminal, which tests did not run for a program
// this machine lacks (mosquitto). Its tests run twice as many parallel
// ones at once as there are processors (testenv.WidenParallel): most wait
// out keep-alives, backoffs and blackholed links.
func TestMain(m *testing.M) {
	testenv.WidenParallel()
	os.Exit(testenv.Run(m))
}
