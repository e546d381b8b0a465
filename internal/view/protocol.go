package view

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"

	"github.com/robotexec/robotexec/subscribers"
)

// Status levels of the protocol's status messages.
const (
	levelInfo    = 0
	levelWarning = 1
	levelError   = 2
)

// The JSON messages of the protocol that the server sends.
type (
	serverInfoMsg struct {
		Op                 string            `json:"op"`
		Name               string            `json:"name"`
		Capabilities       []string          `json:"capabilities"`
		SupportedEncodings []string          `json:"supportedEncodings,omitempty"`
		Metadata           map[string]string `json:"metadata"`
		SessionID          string            `json:"sessionId"`
	}
	advertiseMsg struct {
		Op       string       `json:"op"`
		Channels []advertised `json:"channels"`
	}
	advertised struct {
		ID             uint32 `json:"id"`
		Topic          string `json:"topic"`
		Encoding       string `json:"encoding"`
		SchemaName     string `json:"schemaName"`
		Schema         string `json:"schema"`
		SchemaEncoding string `json:"schemaEncoding,omitempty"`
	}
	unadvertiseMsg struct {
		Op         string   `json:"op"`
		ChannelIDs []uint32 `json:"channelIds"`
	}
	statusMsg struct {
		Op      string `json:"op"`
		Level   int    `json:"level"`
		Message string `json:"message"`
	}
)

// request is a JSON message of a viewer: the fields of every op it may
// send that the server handles.
type request struct {
	Op            string `json:"op"`
	Subscriptions []struct {
		ID        uint32 `json:"id"`
		ChannelID uint32 `json:"channelId"`
	} `json:"subscriptions"`
	SubscriptionIDs []uint32 `json:"subscriptionIds"`
	Channels        []struct {
		ID       uint32 `json:"id"`
		Topic    string `json:"topic"`
		Encoding string `json:"encoding"`
	} `json:"channels"`
	ChannelIDs     []uint32 `json:"channelIds"`
	ParameterNames []string `json:"parameterNames"`
	Parameters     []struct {
		Name string `json:"name"`
	} `json:"parameters"`
	ID string `json:"id"`
}

func advertisement(ch *channel) advertised {
	return advertised{ID: ch.id, Topic: ch.topic, Encoding: ch.encoding,
		SchemaName: ch.schemaName, Schema: ch.schema, SchemaEncoding: ch.schemaEncoding}
}

// marshal encodes v without escaping <, > and &.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// canPublish reports whether the viewer may publish: the server takes
// publications and the viewer may write some topic.
func (c *conn) canPublish() bool { return c.s.opts.Publish != nil && len(c.user.Write) > 0 }

// whyNotPublish says why the viewer may not publish, when it may not.
func (c *conn) whyNotPublish() string {
	if c.s.opts.Publish != nil && c.user == &c.s.anonymous {
		return "anonymous viewers may not publish: connect as a user whose write filters match the topic, or let them publish with view.anonymous_publish: true"
	}
	return "this server does not take publications from this viewer"
}

func (c *conn) serverInfo() serverInfoMsg {
	m := serverInfoMsg{Op: "serverInfo", Name: c.s.opts.Name, Capabilities: []string{},
		Metadata: map[string]string{}, SessionID: c.s.session}
	if c.canPublish() {
		m.Capabilities = append(m.Capabilities, "clientPublish")
		m.SupportedEncodings = []string{JSONEncoding}
	}
	if c.s.opts.ConnectionGraph {
		m.Capabilities = append(m.Capabilities, "connectionGraph")
	}
	if c.s.opts.Parameters != nil {
		m.Capabilities = append(m.Capabilities, "parameters")
	}
	if c.s.opts.Time {
		m.Capabilities = append(m.Capabilities, "time")
	}
	return m
}

func (c *conn) status(level int, format string, args ...any) {
	c.sendJSON(statusMsg{Op: "status", Level: level, Message: fmt.Sprintf(format, args...)})
}

// handleOp handles a JSON message of the viewer.
func (c *conn) handleOp(data []byte) {
	var r request
	if err := json.Unmarshal(data, &r); err != nil {
		c.status(levelError, "not a JSON message of the protocol: %v", err)
		return
	}
	switch r.Op {
	case "subscribe":
		for _, s := range r.Subscriptions {
			c.subscribe(s.ID, s.ChannelID)
		}
	case "unsubscribe":
		for _, id := range r.SubscriptionIDs {
			c.unsubscribe(id)
		}
	case "advertise":
		for _, ch := range r.Channels {
			c.advertise(ch.ID, ch.Topic, ch.Encoding)
		}
	case "unadvertise":
		c.mu.Lock()
		for _, id := range r.ChannelIDs {
			delete(c.pubs, id)
		}
		c.mu.Unlock()
	case "subscribeConnectionGraph", "unsubscribeConnectionGraph":
		if !c.s.opts.ConnectionGraph {
			c.status(levelError, "op %q: this server has no connection graph", r.Op)
			return
		}
		c.mu.Lock()
		c.subscribeGraph(r.Op == "subscribeConnectionGraph")
		c.mu.Unlock()
	case "getParameters", "setParameters":
		if c.s.opts.Parameters == nil {
			c.status(levelError, "op %q: this server has no parameters", r.Op)
		} else if r.Op == "getParameters" {
			c.getParameters(r.ParameterNames, r.ID)
		} else {
			names := make([]string, len(r.Parameters))
			for i, p := range r.Parameters {
				names[i] = p.Name
			}
			c.setParameters(names, r.ID)
		}
	default:
		c.status(levelWarning, "op %q is not supported", r.Op)
	}
}

// subscribe subscribes the viewer to a channel it was shown.
func (c *conn) subscribe(id, chID uint32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := c.s.reg.channel(chID)
	switch {
	case ch == nil || !c.shown[chID]:
		c.statusLocked(levelError, "subscribe %d: no channel %d", id, chID)
	case c.subs[id] != nil:
		c.statusLocked(levelError, "subscribe %d: the subscription id is in use", id)
	default:
		c.subs[id] = ch
		ch.subscribe(viewSub{c, id})
	}
}

func (c *conn) unsubscribe(id uint32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := c.subs[id]
	if ch == nil {
		c.statusLocked(levelWarning, "unsubscribe %d: no such subscription", id)
		return
	}
	delete(c.subs, id)
	ch.unsubscribe(viewSub{c, id})
}

// statusLocked is status with c.mu held.
func (c *conn) statusLocked(level int, format string, args ...any) {
	b, err := marshal(statusMsg{Op: "status", Level: level, Message: fmt.Sprintf(format, args...)})
	if err == nil && len(c.control) < maxControl {
		c.control = append(c.control, b)
	}
	c.wake()
}

// advertise takes a channel of the viewer's, to publish on topic.
func (c *conn) advertise(id uint32, topic, encoding string) {
	var problem string
	switch {
	case !c.canPublish():
		problem = c.whyNotPublish()
	case encoding != JSONEncoding:
		problem = fmt.Sprintf("encoding %q is not supported; use %q", encoding, JSONEncoding)
	case subscribers.ValidateTopic(topic) != nil:
		problem = subscribers.ValidateTopic(topic).Error()
	case !matches(c.user.Write, topic):
		problem = "not authorized to publish on " + topic
	}
	if problem != "" {
		c.status(levelError, "advertise %d (%s): %s", id, topic, problem)
		return
	}
	c.mu.Lock()
	c.pubs[id] = topic
	c.mu.Unlock()
}

// handleBinary handles a binary message of the viewer: a publication on
// one of its channels.
func (c *conn) handleBinary(data []byte) {
	if len(data) < 5 || data[0] != opClientMessageData {
		c.status(levelError, "binary message: not a Client Message Data")
		return
	}
	id := binary.LittleEndian.Uint32(data[1:5])
	c.mu.Lock()
	topic, ok := c.pubs[id]
	c.mu.Unlock()
	if !ok {
		c.status(levelError, "message on channel %d, which this viewer did not advertise", id)
		return
	}
	if err := c.s.publish(topic, data[5:]); err != nil {
		c.status(levelError, "publish on %s: %v", topic, err)
	}
}
