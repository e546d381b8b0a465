package nodetest

import (
	"encoding/json"
	"time"

	"github.com/robotexec/robotexec/subscribers"
)

// publication is one publication of a node, as the rig recorded it.
type publication struct {
	node, topic string
	payload     []byte
	at          time.Time
}

// record is the rig's nodehooks.Hooks.Published: it sees every publication of
// the rig's nodes as it is made, whoever subscribes to it, from any
// goroutine. The hook's payload is never modified.
func (r *Rig) record(node, topic string, payload []byte, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pubs = append(r.pubs, publication{node: node, topic: topic, payload: payload, at: at})
}

// Published returns the payloads the rig's nodes published so far on the
// topics filter matches (a topic name, or an MQTT filter: "out/+",
// "out/#"), in order; not those of Publish.
func (r *Rig) Published(filter string) []string {
	var out []string
	for _, p := range r.published(filter) {
		out = append(out, string(p.payload))
	}
	return out
}

// PublishedJSON is Published with the payloads decoded from JSON into
// values of T (encoding/json). A payload that does not decode fails the
// test.
func PublishedJSON[T any](r *Rig, filter string) []T {
	r.helper()
	var out []T
	for _, p := range r.published(filter) {
		var v T
		if err := json.Unmarshal(p.payload, &v); err != nil {
			r.fatalf("nodetest: %s published on %s at %s: %q: %v", p.node, p.topic, p.at.Format(time.RFC3339Nano), p.payload, err)
			return out
		}
		out = append(out, v)
	}
	return out
}

func (r *Rig) published(filter string) []publication {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []publication
	for _, p := range r.pubs {
		if subscribers.Match(filter, p.topic) {
			out = append(out, p)
		}
	}
	return out
}
