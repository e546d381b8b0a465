// Command robotexec runs robot nodes' callbacks on timers and MQTT messages:
// the stock binary, with the built-in node types and the example ones (the
// simulated sensors and the IMU filter of examples/config.yaml, the
// pipeline stages of examples/pipeline.yaml).
//
//	robotexec run config.yaml
//
// docs/config.md describes the config file and docs/cli.md every command;
// 'robotexec -h' lists them.
package main

import (
	"os"

	"github.com/robotexec/robotexec"

	// The example node types, so that examples/config.yaml runs as is.
	_ "github.com/robotexec/robotexec/examples/imufilter"
	_ "github.com/robotexec/robotexec/examples/pipeline"
	_ "github.com/robotexec/robotexec/examples/simsensor"
)

// exit is os.Exit; the test replaces it to read the exit status. main is
// robotexec.Main with it.
var exit = os.Exit

func main() { exit(robotexec.Run(os.Args[1:], os.Stdout, os.Stderr)) }
