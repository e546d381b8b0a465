package builtin

// MapTopic exposes the bridge's topic mapping to the tests.
func MapTopic(from, to, topic string) (string, bool, error) {
	m, err := newTopicMap(from, to)
	if err != nil {
		return "", false, err
	}
	out, ok := m.apply(topic)
	return out, ok, nil
}

// Beat and Alarm are the heartbeat's and the watchdog's messages, for the
// tests to decode.
type (
	Beat  = beat
	Alarm = staleness
)
