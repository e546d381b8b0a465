package bench

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/robotexec/robotexec/internal/mqtttest"
)

// The bridge group: robotexec's bridge node beside two raw forwarders,
// through the embedded broker and through mosquitto.

func (s *suite) bridge() ([]Metric, error) {
	// Three forwarders a repetition in each of two rows: each round takes
	// a third of the slice, so that the group keeps its share.
	d := s.cfg.slice("bridge") / 3
	m, err := s.bridgeRounds(specBridge, BridgeBroker{}, d)
	if err != nil {
		return nil, err
	}
	m.Note = fmt.Sprintf("QoS %d, %d-byte payloads, at most %d in flight, through the embedded broker, clean sessions: bridge node (nodes.Build, MQTT client, executor of %d workers) vs %s.",
		BridgeQoS, BridgePayload, BridgeWindow, s.cfg.Workers, m.Note)
	return []Metric{m, s.bridgeMosquitto(d)}, nil
}

// bridgeMosquitto measures the bridge through mosquitto, or says why it
// could not.
func (s *suite) bridgeMosquitto(d time.Duration) Metric {
	var m Metric
	err := withMosquitto(func(url string) error {
		var err error
		m, err = s.bridgeRounds(specBridgeMosq, BridgeBroker{URL: url, Persistent: true}, d)
		return err
	})
	if err != nil {
		return failedOrNotMeasured(specBridgeMosq, err)
	}
	m.Note = fmt.Sprintf("the same through mosquitto (persistence, set_tcp_nodelay, max_queued_messages 100000, max_inflight_messages 1000), every forwarder with a persistent session (robotexec's default; paho.mqtt.golang's ordered store) vs %s; %s.",
		m.Note, mosquittoVersion())
	return m
}

// withMosquitto starts mosquitto on a free loopback port with the
// settings of docs/mqtt.md (persistence in a temporary directory,
// set_tcp_nodelay, max_queued_messages 100000, max_inflight_messages 1000:
// MQTT 5 clients may then have 1,000 QoS 1 publications in flight, not
// 20), calls f with its URL, and
// stops it. Without a mosquitto binary it returns errNoMosquitto.
func withMosquitto(f func(url string) error) error {
	if _, ok := mqtttest.MosquittoPath(); !ok {
		return errNoMosquitto
	}
	dir, err := os.MkdirTemp("", "robotexec-bench-mosquitto-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	mq, err := mqtttest.StartMosquitto(dir, mqtttest.MosquittoOptions{Persistence: true, Extra: []string{"max_inflight_messages 1000"}})
	if err != nil {
		return fmt.Errorf("mosquitto: %w", err)
	}
	defer mq.Stop()
	return f(mq.URL())
}

// errNoMosquitto is what withMosquitto returns on a machine without a
// mosquitto binary: its rows are not measured, which is not a failure.
var errNoMosquitto = errors.New("install mosquitto")

// failedOrNotMeasured returns the metric of spec that err kept from being
// measured: not measured without mosquitto, failed otherwise.
func failedOrNotMeasured(spec Spec, err error) Metric {
	if errors.Is(err, errNoMosquitto) {
		return NotMeasured(spec, err.Error())
	}
	return Failed(spec, err)
}

// bridgeRounds measures the bridge rig through b: s.cfg.Repeat
// repetitions of a round of d of robotexec's bridge and one of each raw
// forwarder (in turns: robotexec first or last, either raw forwarder
// first). The baseline is the faster raw forwarder, by its median; the
// metric's figures hold both, and its note (to be completed by the
// caller) names them.
func (s *suite) bridgeRounds(spec Spec, b BridgeBroker, d time.Duration) (Metric, error) {
	rig, err := NewBridgeRig(s.cfg.Workers, b)
	if err != nil {
		return Metric{}, err
	}
	turn := 0
	as, bs, err := s.pairs(func() ([]float64, error) {
		r, err := rig.RoundRobotexec(d)
		return one(r.PerSecond()), err
	}, func() ([]float64, error) {
		// bs[0] is paho.mqtt.golang's, bs[1] paho.golang's, whichever
		// went first.
		modes := []int{bridgeRaw, bridgeRaw5}
		if turn/2%2 == 1 {
			modes = []int{bridgeRaw5, bridgeRaw}
		}
		turn++
		rates := make([]float64, 2)
		for _, mode := range modes {
			r, err := rig.round(mode, 0, d)
			if err != nil {
				return nil, err
			}
			rates[mode-bridgeRaw] = r.PerSecond()
		}
		return rates, nil
	})
	receiveMax := rig.raw5.receiveMax
	if cerr := rig.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return Metric{}, err
	}
	return fasterRaw(spec, as[0], bs[0], bs[1], receiveMax), nil
}

// fasterRaw returns the metric of robotexec's rates beside the faster of
// the two raw forwarders' (paho.mqtt.golang's and paho.golang's), with
// both in its figures and its note, which also gives the broker's Receive
// Maximum that paho.golang honours.
func fasterRaw(spec Spec, robotexec, raw, raw5 []float64, receiveMax uint16) Metric {
	chosen, other := raw, raw5
	spec.BaselineName = rawNames[bridgeRaw]
	if Median(raw5) > Median(raw) {
		chosen, other = raw5, raw
		spec.BaselineName = rawNames[bridgeRaw5]
	}
	m := NewMetric(spec, robotexec, chosen)
	m.Figures = []Figure{
		NewFigure(rawNames[bridgeRaw], spec.Unit, raw),
		NewFigure(rawNames[bridgeRaw5], spec.Unit, raw5),
	}
	vsOther := "-"
	if o := Median(other); o > 0 {
		vsOther = FormatNumber(m.Value / o)
	}
	m.Note = fmt.Sprintf("the faster of two raw forwarders, each a client whose handler republishes at QoS %d without waiting for the broker, measured in the same repetitions: %s %s, %s %s %s (robotexec over the slower: %s; paho.golang keeps at most the broker's Receive Maximum, %d, in flight)",
		BridgeQoS, rawNames[bridgeRaw], FormatNumber(m.Figures[0].Value), rawNames[bridgeRaw5], FormatNumber(m.Figures[1].Value), spec.Unit, vsOther, receiveMax)
	return m
}

// mosquittoVersion returns mosquitto's first line of -h, or "version
// unknown".
func mosquittoVersion() string {
	path, ok := mqtttest.MosquittoPath()
	if !ok {
		return "version unknown"
	}
	out, _ := exec.Command(path, "-h").CombinedOutput()
	first, _, _ := strings.Cut(string(out), "\n")
	if first = strings.TrimSpace(first); first == "" {
		return "version unknown"
	}
	return first
}
