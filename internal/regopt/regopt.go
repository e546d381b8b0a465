// Package regopt holds the settings of one callback's registration or one
// publisher: what executor.Option sets, and so executor.Option, which is the
// same type. The executor reads the settings it knows; package nodes fills
// in the config's defaults first and reads QoS and Retain itself.
package regopt

import "github.com/robotexec/robotexec/internal/bus"

// Values are the settings; the zero value means every default. G is
// package executor's *Group, which imports this package.
type Values[G comparable] struct {
	// Group is the group the callback joins, or the zero G (nil) for its
	// owner's default group.
	Group G
	// Name names the callback; "" means the executor's default.
	Name string
	// Depth is a subscription's queue depth; 0 means the default.
	Depth int
	// Overflow is a subscription's overflow policy, or nil for the
	// default.
	Overflow *bus.Policy
	// Priority is the callback's priority, or a group's; 0 is the
	// lowest, and the default.
	Priority int
	// Needs names the resources the callback needs.
	Needs []string
	// Made is called with a subscription once it is made.
	Made func(*bus.Subscription)
	// QoS is the MQTT QoS of a subscription or a publisher, or nil for the
	// default (package nodes').
	QoS *byte
	// Retain makes a publisher's messages retained (package nodes').
	Retain bool
}

// Apply returns the values that opts set, in order, over v.
func Apply[G comparable, O ~func(*Values[G])](v Values[G], opts []O) Values[G] {
	for _, opt := range opts {
		opt(&v)
	}
	return v
}
