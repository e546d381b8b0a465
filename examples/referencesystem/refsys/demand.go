package refsys

import (
	"fmt"
	"math"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Demand returns the crunches a second that g asks for at its nominal
// rates, by crunch limit: a sensor publishes once a period, a transform
// and an intersection's connection as often as their input, a fusion as
// often as its slower input (it crunches once both inputs have a
// sample), a cyclic node once a period. Times the CPU time of a crunch
// of each limit, it is the CPU g needs: more than the workers give, and
// the callbacks off the hot path fall behind, their keep-last queues
// dropping what they miss. It fails on params it cannot read.
func (g Graph) Demand() (map[uint64]float64, error) {
	rates := map[string]float64{} // by topic
	type crunching struct {
		inputs []string // a fusion's: the slower one sets the rate
		output string
		period time.Duration // a cyclic node's
		crunch uint64
	}
	var cs []crunching
	for _, n := range g.Nodes {
		var err error
		switch n.Type {
		case TypeSensor:
			p := SensorParams{Topic: n.Name}
			if err = decodeParams(n, &p); err == nil && p.Period > 0 {
				rates[p.Topic] = float64(time.Second) / float64(p.Period)
			}
		case TypeTransform:
			p := TransformParams{Output: n.Name, Crunch: DefaultCrunch}
			err = decodeParams(n, &p)
			cs = append(cs, crunching{inputs: []string{p.Input}, output: p.Output, crunch: p.Crunch})
		case TypeFusion:
			p := FusionParams{Output: n.Name, Crunch: DefaultCrunch}
			err = decodeParams(n, &p)
			cs = append(cs, crunching{inputs: p.Inputs, output: p.Output, crunch: p.Crunch})
		case TypeCyclic:
			p := CyclicParams{Output: n.Name, Crunch: DefaultCrunch}
			err = decodeParams(n, &p)
			cs = append(cs, crunching{output: p.Output, period: p.Period, crunch: p.Crunch})
		case TypeIntersection:
			p := IntersectionParams{Crunch: DefaultCrunch}
			err = decodeParams(n, &p)
			for _, c := range p.Connections {
				crunch := p.Crunch
				if c.Crunch != nil {
					crunch = *c.Crunch
				}
				cs = append(cs, crunching{inputs: []string{c.Input}, output: c.Output, crunch: crunch})
			}
		}
		if err != nil {
			return nil, err
		}
	}
	rate := func(c crunching) float64 {
		if c.period > 0 {
			return float64(time.Second) / float64(c.period)
		}
		r := math.Inf(1)
		for _, in := range c.inputs {
			r = min(r, rates[in])
		}
		if math.IsInf(r, 1) {
			return 0
		}
		return r
	}
	// The rates flow down the graph: as many rounds as there are
	// crunching callbacks reach the end of its longest path.
	for range cs {
		for _, c := range cs {
			rates[c.output] = rate(c)
		}
	}
	out := map[uint64]float64{}
	for _, c := range cs {
		if r := rate(c); r > 0 {
			out[c.crunch] += r
		}
	}
	return out, nil
}

// decodeParams decodes the params of n into dst, strictly.
func decodeParams(n Node, dst any) error {
	dec := yaml.NewDecoder(strings.NewReader(n.Params))
	dec.KnownFields(true)
	if err := dec.Decode(dst); err != nil {
		return fmt.Errorf("refsys: %s: params %s: %w", n.Name, n.Params, err)
	}
	return nil
}
