// Package config loads config.yaml, the file that tells robotexec which
// executor, MQTT broker, metrics endpoint and nodes to run. [Config]
// documents every key and its default.
//
// # Errors
//
// Every problem is reported with its file and line, in the form
//
//	config.yaml:12: nodes[1].params.period: "fast" is not a duration
//
// as an [*Error], and all of them at once: Load and Parse join every
// problem they find, in line order (see [Join] and [Errors]). Malformed
// YAML, a document that is not a mapping, unknown and duplicate keys,
// values of the wrong type or out of range, an unset environment variable
// and duplicate node names are all errors; nothing is silently ignored.
//
// # Values
//
// Scalars are typed by the field they fill, from their text: 4 and "4"
// both fill an integer field, and yes/no/on/off are booleans as in
// yaml.v3. A null or absent value keeps the default. Anchors, aliases and
// merge keys (<<: *defaults) work as in YAML.
//
// ${VAR} and ${VAR:-default} in any scalar value (not in keys), node
// params included, expand from the environment, also inside longer strings
// (robotexec-${HOSTNAME}). ${VAR:-default} takes the default when VAR is
// unset or empty; ${VAR} of an unset VAR is an error, except HOSTNAME,
// which falls back to os.Hostname because shells do not export it. $$ is a
// literal $; any other $ is literal too, so MQTT topics such as $SYS/# and
// $share/group/topic need no escaping. A value that expands to nothing
// counts as null: "${WORKERS:-}" keeps the default.
//
// # Node params
//
// Parse does not know node types: it keeps each node's params: mapping
// undecoded in [Params], for the node's type to decode strictly into its
// own struct with [Params.Decode], with the same located errors. Callers
// report their own findings at the right line with [Node.Errorf],
// [Params.Errorf] and [Config.Errorf].
//
// Only this package imports gopkg.in/yaml.v3. A Config, its Nodes and
// their Params are safe for concurrent reads once Parse has returned.
package config
