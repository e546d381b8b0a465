package nodetest

import (
	"encoding/json"
	"time"
)

// publication is one publication of a node, as the rig recorded it.
type publication struct {
	node, topic string
	payload     []byte
	at          time.Time
}

// record is the rig's nodes.Hooks.Published: it sees every publication of
// the rig's nodes as it is made, whoever subscribes to it, from any
// goroutine. The hook's payload is never modified.
func (r *Rig) record(node, topic string, payload []byte, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pubs = append(r.pubs, publication{node: node, topic: topic, payload: payload, at: at})
}

// Published returns the payloads the rig's nodes published on topic (a
// topic name, not a filter) so far, in order; not those of Publish.
func (r *Rig) Published(topic string) []string {
	var out []string
	for _, p := range r.published(topic) {
		out = append(out, string(p.payload))
	}
	return out
}

// PublishedJSON returns what the rig's nodes published on topic so far,
// in order, decoded from JSON into values of T (encoding/json). A payload
// that does not decode fails the test.
func PublishedJSON[T any](r *Rig, topic string) []T {
	r.helper()
	var out []T
	for _, p := range r.published(topic) {
		var v T
		if err := json.Unmarshal(p.payload, &v); err != nil {
			r.fatalf("nodetest: %s published on %s at %s: %q: %v", p.node, topic, p.at.Format(time.RFC3339Nano), p.payload, err)
			return out
		}
		out = append(out, v)
	}
	return out
}

func (r *Rig) published(topic string) []publication {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []publication
	for _, p := range r.pubs {
		if p.topic == topic {
			out = append(out, p)
		}
	}
	return out
}
