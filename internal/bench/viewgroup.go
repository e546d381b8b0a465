package bench

import (
	"fmt"
	"time"

	"github.com/robotexec/robotexec/internal/config"
)

// The view forwarding metrics: the CPU time the live view adds per message
// forwarded to a viewer against robotexec echo's per message printed, and
// the arrival-to-frame latency against echo's arrival-to-print.
var (
	specViewCPU = Spec{Name: "view forwarding (us cpu/msg)", Unit: "us cpu/msg", BaselineName: "echo", Target: &Target{Of: "ratio", Op: "<=", Bound: 1.0}}
	specViewP99 = Spec{Name: "view forwarding p99 (us)", Unit: "us", BaselineName: "echo", Target: &Target{Of: "value", Op: "<=", Bound: 1000}}
)

func (s *suite) view() ([]Metric, error) {
	w, d := s.cfg.Workers, s.cfg.slice("view")
	var rates [2][]float64
	as, bs, err := s.pairs(func() ([]float64, error) {
		c, err := ViewForwarding(w, d)
		rates[0] = append(rates[0], c.Rate())
		return []float64{c.PerMessage(), micros(c.P99), float64(c.Delivered) / float64(max(c.Received, 1))}, err
	}, func() ([]float64, error) {
		c, err := EchoPrinting(w, d)
		rates[1] = append(rates[1], c.Rate())
		return []float64{c.PerMessage(), micros(c.P99)}, err
	})
	if err != nil {
		return nil, err
	}
	cpu, p99 := NewMetric(specViewCPU, as[0], bs[0]), NewMetric(specViewP99, as[1], bs[1])
	cpu.Figures = []Figure{NewFigure("frames read per message received", "frames/msg", as[2])}
	cpu.Note = fmt.Sprintf("%d JSON topics (%d-byte payloads) at one message each every %v (QoS 0, a raw paho publisher, the embedded broker) into robotexec run's side: an MQTT client, in-process, whose node subscribes to every topic (executor of %d workers); the view is its router's tap (bus.TapInputs, as view.listen does) with %d viewers in the process (WebSocket clients of foxglove.websocket.v1 subscribed to every channel, reading as fast as they can); baseline: robotexec echo's client, executor and formatting (\"TOPIC PAYLOAD\\n\" to io.Discard) on the same traffic; both with robotexec run's default executor.gc_headroom (%v). Each is the process's CPU time (user and system) over a window with it attached minus the same traffic's without it (measured first in the same run, per message received), per frame that a viewer read of the messages received in the window (%s frames per message received) or per line printed of those that reached echo's client in it; the viewers' reading and the broker's sending to echo's client count. Received %s vs %s msgs/s.",
		ViewTopics, len(viewPayload), ViewPeriod, w, ViewViewers, config.DefaultGCHeadroom, FormatNumber(cpu.Figures[0].Value), FormatNumber(Median(rates[0])), FormatNumber(Median(rates[1])))
	p99.Note = "the router's arrival time (the frame's stamp) to the frame's reading by a viewer, over both viewers, vs echo's client's arrival time to the end of its write."
	return []Metric{cpu, p99}, nil
}

// viewMinSlice is the view group's shortest run of one system.
const viewMinSlice = 200 * time.Millisecond
