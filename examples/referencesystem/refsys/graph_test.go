package refsys_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/examples/referencesystem/refsys"
	"github.com/robotexec/robotexec/internal/config"
)

// WithCrunch sets the crunch of every crunching node, each connection of
// an intersection's included, and leaves sensors and commands alone.
func TestWithCrunch(t *testing.T) {
	cfg, err := config.Parse("graph.yaml", []byte(refsys.Autoware.WithCrunch(7).Config()), nil)
	require.NoError(t, err)
	require.Len(t, cfg.Nodes, len(refsys.Autoware.Nodes))
	crunching := 0
	for _, n := range cfg.Nodes {
		var p map[string]any
		require.NoError(t, n.Params.Decode(&p))
		if n.Type == refsys.TypeSensor || n.Type == refsys.TypeCommand {
			require.NotContains(t, p, "crunch", "%s", n.Name)
			continue
		}
		crunching++
		require.Equal(t, 7, p["crunch"], "%s", n.Name)
	}
	require.Equal(t, 16, crunching)
	require.NotContains(t, refsys.Autoware.Config(), "crunch", "Autoware is left as it is")
}
