package view

import "encoding/json"

// maxSchemaDepth bounds the nesting that a schema describes; deeper
// values are left open ({}).
const maxSchemaDepth = 16

// inferSchema returns a JSON Schema of the JSON value payload, from its
// types: enough for a viewer to offer the fields of a topic (a plot of
// robot/imu0/data.ax). It is "" when payload is not JSON.
func inferSchema(payload []byte) string {
	var v any
	if err := json.Unmarshal(payload, &v); err != nil {
		return ""
	}
	b, err := json.Marshal(schemaOf(v, 0))
	if err != nil {
		return ""
	}
	return string(b)
}

// schemaOf returns the schema of v, at depth.
func schemaOf(v any, depth int) map[string]any {
	if depth >= maxSchemaDepth {
		return map[string]any{}
	}
	switch v := v.(type) {
	case map[string]any:
		props := make(map[string]any, len(v))
		for k, x := range v {
			props[k] = schemaOf(x, depth+1)
		}
		return map[string]any{"type": "object", "properties": props}
	case []any:
		s := map[string]any{"type": "array"}
		if len(v) > 0 {
			s["items"] = schemaOf(v[0], depth+1)
		}
		return s
	case float64:
		return map[string]any{"type": "number"}
	case string:
		return map[string]any{"type": "string"}
	case bool:
		return map[string]any{"type": "boolean"}
	default:
		return map[string]any{"type": "null"}
	}
}
