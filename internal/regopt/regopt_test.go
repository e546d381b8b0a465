package regopt_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/regopt"
)

type option func(*regopt.Values)

func TestApplyInOrderOverTheStart(t *testing.T) {
	block := bus.Block
	opts := []option{
		func(v *regopt.Values) { v.Name = "first" },
		func(v *regopt.Values) { v.Needs = append(v.Needs, "odom") },
		func(v *regopt.Values) { v.Name = "second"; v.Overflow = &block },
	}
	got := regopt.Apply(regopt.Values{Depth: 5, Needs: []string{"imu"}}, opts)
	require.Equal(t, "second", got.Name, "a later option wins")
	require.Equal(t, 5, got.Depth, "what no option sets is kept")
	require.Equal(t, []string{"imu", "odom"}, got.Needs)
	require.Equal(t, bus.Block, *got.Overflow)
	require.Equal(t, regopt.Values{}, regopt.Apply[option](regopt.Values{}, nil))
}
