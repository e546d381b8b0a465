// Package imufilter is an example node type: a low-pass filter for IMU
// samples. It subscribes to JSON samples, blends each into an exponential
// moving average, publishes the average on a timer, and logs it about once a
// second.
package imufilter

import (
	"context"
	"time"

	"github.com/robotexec/robotexec/nodes"
	"github.com/robotexec/robotexec/timers"
)

func init() { nodes.Register("imu_filter", "low-pass filter for IMU samples", New) }

// Params are the node's params.
type Params struct {
	Input  string        `yaml:"input"`  // topic of the raw samples
	Output string        `yaml:"output"` // topic of the filtered samples
	Alpha  float64       `yaml:"alpha"`  // weight of a new sample, 0 < alpha <= 1
	Period time.Duration `yaml:"period"` // how often the average is published
	Log    time.Duration `yaml:"log"`    // how often it is logged; 0: never
}

// Sample is an IMU sample: linear acceleration (m/s²) and angular velocity
// (rad/s).
type Sample struct {
	AX float64 `json:"ax"`
	AY float64 `json:"ay"`
	AZ float64 `json:"az"`
	GX float64 `json:"gx"`
	GY float64 `json:"gy"`
	GZ float64 `json:"gz"`
}

// Filtered is what the node publishes.
type Filtered struct {
	Sample
	Samples uint64 `json:"samples"` // samples blended so far
}

// New builds an imu_filter node.
func New(n *nodes.Node) error {
	p := Params{Alpha: 0.2, Period: 50 * time.Millisecond, Log: time.Second}
	if err := n.Params(&p); err != nil {
		return err
	}
	out := n.Publisher(p.Output)
	var avg Filtered
	// The callbacks share the node's mutually exclusive group: avg needs
	// no lock.
	nodes.Subscribe(n, p.Input, func(_ context.Context, s Sample) {
		if avg.Samples == 0 {
			avg.Sample = s
		} else {
			avg.Sample = blend(avg.Sample, s, p.Alpha)
		}
		avg.Samples++
	})
	n.Timer(p.Period, func(ctx context.Context, _ timers.Event) {
		if avg.Samples > 0 {
			out.PublishJSON(ctx, avg)
		}
	})
	if p.Log > 0 {
		n.Timer(p.Log, func(ctx context.Context, _ timers.Event) {
			n.Logger().Info("filtered imu", "ax", round(avg.AX), "ay", round(avg.AY), "az", round(avg.AZ),
				"gz", round(avg.GZ), "samples", avg.Samples)
		})
	}
	return nil
}

// blend returns the exponential moving average of avg and s with weight a.
func blend(avg, s Sample, a float64) Sample {
	mix := func(x, y float64) float64 { return x + a*(y-x) }
	return Sample{
		AX: mix(avg.AX, s.AX), AY: mix(avg.AY, s.AY), AZ: mix(avg.AZ, s.AZ),
		GX: mix(avg.GX, s.GX), GY: mix(avg.GY, s.GY), GZ: mix(avg.GZ, s.GZ),
	}
}

func round(x float64) float64 { return float64(int64(x*1000)) / 1000 }
