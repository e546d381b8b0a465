package view

import (
	"slices"
	"strings"
)

// Parameter is a parameter that viewers may read: a node's param, named
// /NODE/PARAM, as ROS names them.
type Parameter struct {
	Name string
	// Value is a JSON value: a number, a string, a bool, or a list or a
	// map of them.
	Value any
}

// parameterValuesMsg answers getParameters and setParameters.
type parameterValuesMsg struct {
	Op         string           `json:"op"`
	Parameters []parameterValue `json:"parameters"`
	ID         string           `json:"id,omitempty"`
}

type parameterValue struct {
	Name  string `json:"name"`
	Value any    `json:"value"`
}

// parameters returns the server's parameters of names, in the server's
// order; all of them when names is empty. Unknown names are left out.
func (s *Server) parameters(names []string) []parameterValue {
	out := []parameterValue{}
	for _, p := range s.opts.Parameters {
		if len(names) == 0 || slices.Contains(names, p.Name) {
			out = append(out, parameterValue{Name: p.Name, Value: p.Value})
		}
	}
	return out
}

// getParameters answers a viewer's getParameters.
func (c *conn) getParameters(names []string, id string) {
	c.sendJSON(parameterValuesMsg{Op: "parameterValues", Parameters: c.s.parameters(names), ID: id})
}

// setParameters refuses a viewer's setParameters, the parameters being
// read-only: a status says so, and, when the request has an id, the
// parameters' values (unchanged) answer it.
func (c *conn) setParameters(names []string, id string) {
	c.status(levelError, "setParameters %s: the parameters are read-only (they are the config's)", strings.Join(names, ", "))
	if id != "" && len(names) > 0 {
		c.getParameters(names, id)
	}
}
