package bus

// Source delivers messages to the subscriptions attached to it: a
// [Router], or the MQTT client of internal/mqtt, which attaches them to
// its router.
type Source interface {
	// Attach starts delivering messages whose topic matches s's filter to
	// s, in the order they arrive. It calls s.Attach(source).
	Attach(s *Subscription) error
	// Detach stops delivering to s. Deliveries under way may still land.
	Detach(s *Subscription)
}
