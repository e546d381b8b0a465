package mqtt_test

import (
	"os"
	"testing"

	"github.com/robotexec/robotexec/internal/testenv"
)

// TestMain says, on a terminal, which tests did not run for a program
// this machine lacks (mosquitto).
func TestMain(m *testing.M) { os.Exit(testenv.Run(m)) }
