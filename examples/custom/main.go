// Command custom is an example of a robotexec binary with node types of its
// own: the whole robotexec command line, with the built-in node types and
// the imported ones.
//
//	go run ./examples/custom run examples/config.yaml
package main

import (
	"github.com/robotexec/robotexec"

	_ "github.com/robotexec/robotexec/examples/imufilter"
	_ "github.com/robotexec/robotexec/examples/pipeline"
	_ "github.com/robotexec/robotexec/examples/simsensor"
)

func main() { robotexec.Main() }
