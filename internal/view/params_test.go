package view_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/robotexec/robotexec/internal/view"
)

// TestParameters: getParameters without names answers every parameter,
// with the request's id; without Options.Parameters there is neither the
// capability nor an answer but a status.
func TestParameters(t *testing.T) {
	t.Parallel()
	s := listen(t, view.Options{Anonymous: true, Parameters: []view.Parameter{
		{Name: "/beat/topic", Value: "hb"}, {Name: "/beat/period", Value: "1s"}}})
	ws, _, err := dial(t, s, "", "")
	require.NoError(t, err)
	require.Equal(t, []string{"parameters"}, nextOp(t, ws, "serverInfo").Capabilities)
	send(t, ws, map[string]any{"op": "getParameters", "parameterNames": []string{}, "id": "all"})
	require.NoError(t, ws.SetReadDeadline(time.Now().Add(wait)))
	_, data, err := ws.ReadMessage()
	require.NoError(t, err)
	require.JSONEq(t, `{"op":"parameterValues","id":"all","parameters":[{"name":"/beat/topic","value":"hb"},{"name":"/beat/period","value":"1s"}]}`, string(data))

	s2 := listen(t, view.Options{Anonymous: true})
	ws2, _, err := dial(t, s2, "", "")
	require.NoError(t, err)
	require.Empty(t, nextOp(t, ws2, "serverInfo").Capabilities)
	send(t, ws2, map[string]any{"op": "getParameters", "parameterNames": []string{}})
	m := nextOp(t, ws2, "status")
	require.Contains(t, m.Message, "no parameters")
}
