// Package simsensor is an example of node types that stand in for hardware:
// a simulated IMU and a simulated wheel odometry, each publishing realistic
// JSON on a timer, so that examples/config.yaml runs on any machine.
package simsensor

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/robotexec/robotexec/nodes"
	"github.com/robotexec/robotexec/timers"
)

func init() {
	nodes.Register("sim_imu", "simulated IMU: publishes JSON samples of a robot driving in a circle", NewIMU)
	nodes.Register("sim_odom", "simulated wheel odometry: publishes JSON poses of a robot driving in a circle", NewOdom)
}

// Params are the params of both simulated sensors.
type Params struct {
	Topic string  `yaml:"topic"` // where to publish
	Rate  float64 `yaml:"rate"`  // samples per second
	Speed float64 `yaml:"speed"` // forward speed, m/s
	Turn  float64 `yaml:"turn"`  // yaw rate, rad/s
	Noise float64 `yaml:"noise"` // standard deviation of the sensor noise
}

func params(n *nodes.Node, rate float64) (Params, time.Duration, error) {
	p := Params{Rate: rate, Speed: 0.5, Turn: 0.2, Noise: 0.02}
	if err := n.Params(&p); err != nil {
		return p, 0, err
	}
	if p.Topic == "" {
		return p, 0, fmt.Errorf("topic is required")
	}
	if p.Rate <= 0 || p.Rate > 10000 {
		return p, 0, fmt.Errorf("rate %v must be above 0 and at most 10000", p.Rate)
	}
	return p, time.Duration(float64(time.Second) / p.Rate), nil
}

// IMUSample is one simulated IMU sample.
type IMUSample struct {
	Stamp string  `json:"stamp"`
	AX    float64 `json:"ax"`
	AY    float64 `json:"ay"`
	AZ    float64 `json:"az"`
	GX    float64 `json:"gx"`
	GY    float64 `json:"gy"`
	GZ    float64 `json:"gz"`
}

// NewIMU builds a sim_imu node: a robot driving a circle at Speed and Turn,
// seen by an IMU with gravity on z and Gaussian noise.
func NewIMU(n *nodes.Node) error {
	p, period, err := params(n, 100)
	if err != nil {
		return err
	}
	out := n.Publisher(p.Topic)
	rng := rand.New(rand.NewPCG(uint64(len(n.Name())), 1))
	noise := func() float64 { return rng.NormFloat64() * p.Noise }
	n.Timer(period, func(ctx context.Context, ev timers.Event) {
		out.PublishJSON(ctx, IMUSample{
			Stamp: ev.Expected.UTC().Format(time.RFC3339Nano),
			AX:    noise(),
			AY:    p.Speed*p.Turn + noise(), // centripetal acceleration
			AZ:    9.81 + noise(),
			GX:    noise(),
			GY:    noise(),
			GZ:    p.Turn + noise(),
		})
	})
	return nil
}

// Odometry is one simulated odometry message.
type Odometry struct {
	Stamp string  `json:"stamp"`
	X     float64 `json:"x"`
	Y     float64 `json:"y"`
	Theta float64 `json:"theta"`
	V     float64 `json:"v"`
	W     float64 `json:"w"`
}

// NewOdom builds a sim_odom node: the pose of a robot driving a circle,
// integrated from noisy wheel speeds.
func NewOdom(n *nodes.Node) error {
	p, period, err := params(n, 50)
	if err != nil {
		return err
	}
	out := n.Publisher(p.Topic)
	rng := rand.New(rand.NewPCG(uint64(len(n.Name())), 2))
	var x, y, theta float64
	dt := period.Seconds()
	n.Timer(period, func(ctx context.Context, ev timers.Event) {
		steps := float64(1 + ev.Missed)
		v := p.Speed + rng.NormFloat64()*p.Noise
		w := p.Turn + rng.NormFloat64()*p.Noise
		theta = math.Remainder(theta+w*dt*steps, 2*math.Pi)
		x += v * math.Cos(theta) * dt * steps
		y += v * math.Sin(theta) * dt * steps
		out.PublishJSON(ctx, Odometry{Stamp: ev.Expected.UTC().Format(time.RFC3339Nano), X: x, Y: y, Theta: theta, V: v, W: w})
	})
	return nil
}
