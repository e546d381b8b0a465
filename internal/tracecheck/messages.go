package tracecheck

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"

	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/subscribers"
)

// Messages records the publications of a message workload, by publisher,
// and what each subscription's callback received, and checks the
// message path's promises on them: each subscription got each message
// whose topic its filter matches exactly once, and the messages of each
// publisher in the order they were published. Payloads identify
// messages: a payload that more than one publication carries is counted,
// but left out of the order check. The zero Messages is ready to use.
type Messages struct {
	mu   sync.Mutex
	pubs []publication
	subs map[string]*delivered
}

type publication struct {
	publisher, topic, payload string
}

type delivered struct {
	filter   string // the route filter: FILTER of $share/GROUP/FILTER
	payloads []string
}

// Published records that publisher published payload on topic; a
// publisher's calls must be made in its publication order.
func (m *Messages) Published(publisher, topic string, payload []byte) {
	m.mu.Lock()
	m.pubs = append(m.pubs, publication{publisher, topic, string(payload)})
	m.mu.Unlock()
}

// Subscribe names a subscription with its topic filter; shared
// subscriptions, $share/GROUP/FILTER, are expected to get every message of
// FILTER (the test makes them their group's only member).
func (m *Messages) Subscribe(name, filter string) error {
	route, err := bus.RouteFilter(filter)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.subs == nil {
		m.subs = map[string]*delivered{}
	}
	m.subs[name] = &delivered{filter: route}
	return nil
}

// Delivered records that subscription name's callback received payload;
// its calls must be made in the order the callback ran.
func (m *Messages) Delivered(name string, payload []byte) {
	m.mu.Lock()
	d := m.subs[name]
	d.payloads = append(d.payloads, string(payload))
	m.mu.Unlock()
}

// Count returns how many payloads subscription name received so far.
func (m *Messages) Count(name string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.subs[name].payloads)
}

// Expected returns how many messages subscription name is to receive for
// the publications recorded so far.
func (m *Messages) Expected(name string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, p := range m.pubs {
		if subscribers.Match(m.subs[name].filter, p.topic) {
			n++
		}
	}
	return n
}

// ExpectedFrom returns how many of publisher's messages subscription name
// is to receive.
func (m *Messages) ExpectedFrom(name, publisher string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, p := range m.pubs {
		if p.publisher == publisher && subscribers.Match(m.subs[name].filter, p.topic) {
			n++
		}
	}
	return n
}

// Check checks every subscription: exactly once, and each publisher's
// order.
func (m *Messages) Check() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	owner := map[string]string{} // payload → its only publisher, "" if shared
	for _, p := range m.pubs {
		if o, ok := owner[p.payload]; ok && o != p.publisher {
			owner[p.payload] = ""
		} else if !ok {
			owner[p.payload] = p.publisher
		}
	}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(m.subs)) {
		if err := m.check(name, m.subs[name], owner); err != nil {
			errs = append(errs, fmt.Errorf("subscription %s (%s): %w", name, m.subs[name].filter, err))
		}
	}
	return errors.Join(errs...)
}

func (m *Messages) check(name string, d *delivered, owner map[string]string) error {
	want := map[string]int{}
	order := map[string][]string{} // publisher → its unique payloads, in order
	for _, p := range m.pubs {
		if !subscribers.Match(d.filter, p.topic) {
			continue
		}
		want[p.payload]++
		if owner[p.payload] != "" {
			order[p.publisher] = append(order[p.publisher], p.payload)
		}
	}
	got := map[string]int{}
	seen := map[string][]string{}
	for _, p := range d.payloads {
		got[p]++
		if o := owner[p]; o != "" {
			seen[o] = append(seen[o], p)
		}
	}
	var errs []error
	var diff []string
	for p := range union(want, got) {
		if want[p] != got[p] {
			diff = append(diff, fmt.Sprintf("%q %d times, not %d", p, got[p], want[p]))
		}
	}
	if len(diff) > 0 {
		sort.Strings(diff)
		if len(diff) > maxErrors {
			diff = append(diff[:maxErrors], fmt.Sprintf("and %d more", len(diff)-maxErrors))
		}
		errs = append(errs, fmt.Errorf("not exactly once: %v", diff))
	}
	for _, pub := range slices.Sorted(maps.Keys(order)) {
		if i := firstDifference(order[pub], seen[pub]); i >= 0 && len(diff) == 0 {
			errs = append(errs, fmt.Errorf("publisher %s out of order at its message %d: %v", pub, i, window(seen[pub], i)))
		}
	}
	return errors.Join(errs...)
}

func union(a, b map[string]int) map[string]bool {
	u := map[string]bool{}
	for k := range a {
		u[k] = true
	}
	for k := range b {
		u[k] = true
	}
	return u
}

// firstDifference returns the first index where a and b differ, -1 if
// they are equal.
func firstDifference(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

// window returns the elements of s around index i.
func window(s []string, i int) []string {
	return s[max(0, i-2):min(len(s), i+3)]
}
