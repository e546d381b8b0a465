package app

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/robotexec/robotexec/internal/bus"
	"github.com/robotexec/robotexec/internal/config"
	"github.com/robotexec/robotexec/internal/facade"
	"github.com/robotexec/robotexec/internal/nodehooks"
	"github.com/robotexec/robotexec/internal/view"
	"github.com/robotexec/robotexec/subscribers"
)

// startView serves the live view of view.listen, if any: a viewer's
// publication enters router as a node's does, and the connection graph
// is kept from the graph topics. With executor.use_sim_time, viewers get
// the executor's time (the time capability).
func (a *App) startView(router *subscribers.Router) error {
	v := a.cfg.View
	if v.Listen == "" {
		return nil
	}
	users := make([]view.User, len(v.Users))
	for i, u := range v.Users {
		users[i] = view.User{Username: u.Username, Password: u.Password, Read: u.Read, Write: u.Write}
	}
	qos := byte(a.cfg.MQTT.QoS)
	s, err := view.Listen(view.Options{
		Listen:           v.Listen,
		Name:             "robotexec " + a.cfg.MQTT.ClientID,
		Users:            users,
		Anonymous:        v.AnonymousAllowed(),
		AnonymousPublish: v.AnonymousPublish,
		AllowedOrigins:   v.AllowedOrigins,
		Publish: func(topic string, payload []byte) error {
			_, err := router.Publish(context.Background(), subscribers.Message{Topic: topic, Payload: payload, QoS: qos})
			return err
		},
		ConnectionGraph: true,
		Time:            a.sim != nil,
		Parameters:      nodeParameters(a.cfg),
		MaxPayload:      int(a.cfg.MQTT.MaxPayload),
		MaxChannels:     v.MaxTopics,
		Logger:          a.log.With("component", "view"),
	})
	if err != nil {
		return fmt.Errorf("view.listen: %w", err)
	}
	a.view = s
	if a.sim != nil {
		s.SetTime(a.ex.Clock().Now())
		a.sim.view = s
	}
	// The owner's name is no node's: node names have no parentheses.
	if a.viewGr, err = FeedGraph(a.ex.NewOwner("(view)", nil), a.client, s, a.cfg.MQTT.ClientID); err != nil {
		return fmt.Errorf("view: %w", err)
	}
	a.log.Info("serving the live view", "addr", s.Addr().String(), "protocol", view.Subprotocol)
	return nil
}

// attachTaps shows a recording (run -record) and the live view what
// router receives, and returns the hooks that show them what the nodes
// publish, or nil.
func (a *App) attachTaps(router *subscribers.Router) *nodehooks.Hooks {
	var inputs []func(*bus.Message)
	var published []func(node, topic string, payload []byte, at time.Time)
	var hooks *nodehooks.Hooks
	if a.rec != nil {
		a.rec.begin(a.ex.Clock().Now())
		hooks = a.rec.hooks()
		inputs = append(inputs, a.rec.input)
		published = append(published, hooks.Published)
	}
	if v := a.view; v != nil {
		observe := func(m *bus.Message) { v.Observe(m.Topic, m.Payload, m.Received) }
		if a.sim != nil {
			// The executor's time, as the nodes' publications are stamped.
			clock := a.ex.Clock()
			observe = func(m *bus.Message) { v.Observe(m.Topic, m.Payload, clock.Now()) }
		}
		inputs = append(inputs, observe)
		published = append(published, func(_, topic string, payload []byte, at time.Time) { v.Observe(topic, payload, at) })
	}
	switch len(inputs) {
	case 0:
		return hooks
	case 1:
		bus.TapInputs(facade.Router(router), inputs[0])
	default:
		bus.TapInputs(facade.Router(router), func(m *bus.Message) {
			for _, f := range inputs {
				f(m)
			}
		})
	}
	if hooks == nil {
		hooks = &nodehooks.Hooks{}
	}
	hooks.Published = func(node, topic string, payload []byte, at time.Time) {
		for _, f := range published {
			f(node, topic, payload, at)
		}
	}
	return hooks
}

// closeView closes the live view, if any.
func (a *App) closeView() {
	if a.view != nil {
		if err := a.view.Close(); err != nil {
			a.log.Warn("live view", "error", err)
		}
		a.view = nil
	}
}

// nodeParameters returns the params of the nodes of cfg, as the live
// view's parameters: /NODE/PARAM, node by node in the config's order,
// each node's params sorted, with the values the config gives (a
// duration is its string, "100ms").
func nodeParameters(cfg *config.Config) []view.Parameter {
	ps := []view.Parameter{}
	for _, n := range cfg.Nodes {
		var params map[string]any
		if err := n.Params.Decode(&params); err != nil {
			continue // the node's type decoded them: Check passed
		}
		for _, k := range slices.Sorted(maps.Keys(params)) {
			ps = append(ps, view.Parameter{Name: "/" + n.Name + "/" + k, Value: params[k]})
		}
	}
	return ps
}
