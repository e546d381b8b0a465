// Command referencesystem runs the ROS 2 real-time working group's
// reference system on robotexec: the whole robotexec command line with
// the reference system's node types (package refsys) registered.
//
//	go run ./examples/referencesystem run examples/referencesystem/autoware.yaml
//	go run ./examples/referencesystem run examples/referencesystem/saturated.yaml
//
// saturated.yaml is the same graph with more crunch off the hot path
// than 2 workers can give, and priority 1 on the hot path. The command nodes log the KPIs once a second; robotexec bench -only
// reference measures them against their lower bound.
package main

import (
	"github.com/robotexec/robotexec"

	"github.com/robotexec/robotexec/examples/referencesystem/refsys"
)

func main() {
	refsys.Register()
	robotexec.Main()
}
