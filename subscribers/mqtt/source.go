package mqtt

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/robotexec/robotexec/subscribers"
)

// Attach subscribes s to its topic filter at the client's QoS and starts
// delivering to it the messages that match. See [Client.QoS] for another
// QoS. When the client is connected, Attach waits for the broker's answer
// (up to the connect timeout) and fails when the broker refuses the
// subscription; otherwise the subscription is made on connecting.
//
// A filter may be a shared subscription, $share/GROUP/FILTER: the broker
// gives each message of FILTER to one member of GROUP, and incoming
// messages are matched against FILTER.
func (c *Client) Attach(s *subscribers.Subscription) error {
	return c.attach(s, c.cfg.QoS, c)
}

// Detach stops delivering to s. With CleanSession, Detach also unsubscribes
// the filter when no other attached subscription uses it. With a
// persistent session (the default) the broker keeps the subscription, so
// that messages published while the process is away wait for it; messages
// of a filter that no subscription uses any more are acknowledged and
// counted as unrouted.
func (c *Client) Detach(s *subscribers.Subscription) {
	c.mu.Lock()
	filter, unsub := c.routes.remove(s)
	unsub = unsub && c.cfg.CleanSession && c.linkUp && !c.closed.Load() && filter != c.cfg.StatusTopic
	c.mu.Unlock()
	if unsub {
		// Not waited for: Detach may run inside a callback.
		c.pc.Unsubscribe(filter)
	}
}

// QoS returns a source that attaches subscriptions to the client with QoS
// q instead of the client's default.
func (c *Client) QoS(q byte) subscribers.Source { return qosSource{c: c, qos: q} }

type qosSource struct {
	c   *Client
	qos byte
}

func (v qosSource) Attach(s *subscribers.Subscription) error { return v.c.attach(s, v.qos, v) }
func (v qosSource) Detach(s *subscribers.Subscription)       { v.c.Detach(s) }

func (c *Client) attach(s *subscribers.Subscription, qos byte, src subscribers.Source) error {
	filter := s.Filter()
	if qos > 2 {
		return fmt.Errorf("mqtt: subscribe %q: QoS %d is not 0, 1 or 2", filter, qos)
	}
	inner, err := RouteFilter(filter)
	if err != nil {
		return err
	}
	s.Attach(src)
	c.mu.Lock()
	if c.closed.Load() {
		c.mu.Unlock()
		return ErrClosed
	}
	if !c.routes.add(s, filter, inner, qos) {
		c.mu.Unlock()
		return fmt.Errorf("mqtt: subscribe %q: subscription already attached", filter)
	}
	subQoS := c.routes.filters[filter].qos
	linkUp := c.linkUp
	c.mu.Unlock()
	if !linkUp {
		return nil // onConnect subscribes
	}
	err = c.subscribe(map[string]byte{filter: subQoS})
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrClosed):
		return err
	case errors.Is(err, ErrSubscriptionRefused):
		c.Detach(s)
		return err
	}
	// The connection went away meanwhile; onConnect subscribes again.
	c.log.Debug("mqtt: subscribe deferred to the next connection", "filter", filter, "error", err)
	return nil
}

// RouteFilter returns the filter that incoming topics are matched against
// for a subscription filter: the filter itself, or FILTER for a shared
// subscription $share/GROUP/FILTER. It fails, naming the filter, when the
// filter is malformed.
func RouteFilter(filter string) (string, error) {
	if err := subscribers.ValidateFilter(filter); err != nil {
		return "", fmt.Errorf("mqtt: %w", err)
	}
	rest, ok := strings.CutPrefix(filter, "$share/")
	if !ok {
		if filter == "$share" {
			return "", fmt.Errorf("mqtt: topic filter %q: a shared subscription is $share/GROUP/FILTER", filter)
		}
		return filter, nil
	}
	group, inner, ok := strings.Cut(rest, "/")
	switch {
	case !ok || group == "" || inner == "":
		return "", fmt.Errorf("mqtt: topic filter %q: a shared subscription is $share/GROUP/FILTER", filter)
	case strings.ContainsAny(group, "+#"):
		return "", fmt.Errorf("mqtt: topic filter %q: the group of a shared subscription has no wildcards", filter)
	}
	return inner, nil
}

// routes maps topics to the attached subscriptions. The router and the
// shared list are read without the client's lock by the intake; the maps
// are guarded by the client's mu.
type routes struct {
	router   subscribers.Router
	shared   atomic.Pointer[[]sharedRoute] // copy on write
	attached map[*subscribers.Subscription]string
	filters  map[string]*wireFilter
}

// sharedRoute is an attached shared subscription: subscribers.Router
// indexes a subscription by its own filter, $share/... here, so shared
// ones are matched against their inner filter separately.
type sharedRoute struct {
	inner string
	sub   *subscribers.Subscription
}

// wireFilter is a filter subscribed at the broker, with the number of
// attached subscriptions that use it and the highest QoS they asked for.
type wireFilter struct {
	n   int
	qos byte
}

func (r *routes) init() {
	r.attached = make(map[*subscribers.Subscription]string)
	r.filters = make(map[string]*wireFilter)
}

// add records s; it returns false when s was already attached.
func (r *routes) add(s *subscribers.Subscription, filter, inner string, qos byte) bool {
	if _, ok := r.attached[s]; ok {
		return false
	}
	r.attached[s] = filter
	w := r.filters[filter]
	if w == nil {
		w = &wireFilter{qos: qos}
		r.filters[filter] = w
	}
	w.n++
	w.qos = max(w.qos, qos)
	if inner == filter {
		r.router.Add(s)
		return true
	}
	var list []sharedRoute
	if p := r.shared.Load(); p != nil {
		list = slices.Clone(*p)
	}
	list = append(list, sharedRoute{inner: inner, sub: s})
	r.shared.Store(&list)
	return true
}

// remove forgets s. It returns s's filter and whether no attached
// subscription uses that filter any more.
func (r *routes) remove(s *subscribers.Subscription) (filter string, unused bool) {
	filter, ok := r.attached[s]
	if !ok {
		return "", false
	}
	delete(r.attached, s)
	if !r.router.Remove(s) {
		if p := r.shared.Load(); p != nil {
			list := slices.DeleteFunc(slices.Clone(*p), func(x sharedRoute) bool { return x.sub == s })
			r.shared.Store(&list)
		}
	}
	w := r.filters[filter]
	w.n--
	if w.n > 0 {
		return filter, false
	}
	delete(r.filters, filter)
	return filter, true
}

// wireFilters returns the filters to subscribe at the broker with their
// QoS.
func (r *routes) wireFilters() map[string]byte {
	m := make(map[string]byte, len(r.filters))
	for f, w := range r.filters {
		m[f] = w.qos
	}
	return m
}

// match appends the subscriptions that topic goes to.
func (r *routes) match(topic string, dst []*subscribers.Subscription) []*subscribers.Subscription {
	dst = r.router.Match(topic, dst)
	if p := r.shared.Load(); p != nil {
		for _, x := range *p {
			if subscribers.Match(x.inner, topic) {
				dst = append(dst, x.sub)
			}
		}
	}
	return dst
}
