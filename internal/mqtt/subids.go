package mqtt

import (
	"strconv"
	"strings"
)

// A PUBLISH may carry several subscription identifiers: a broker that
// sends one copy of a message for all the client's subscriptions that
// match it (mochi, HiveMQ) puts each of their identifiers on it. paho
// keeps only the last, and the router needs them all (see
// bus.Router), so frameConn rewrites such a PUBLISH before paho
// reads it: the identifiers go, as a comma-separated list, into one user
// property of the client's own, subIDsKey. The same key in a user
// property from the wire is dropped, so that no publisher can make one.

// subIDsKey is the user property that carries the subscription
// identifiers of a rewritten PUBLISH.
const subIDsKey = "robotexec-subscription-identifiers"

// MQTT 5 PUBLISH properties.
const (
	propPayloadFormat   = 0x01
	propMessageExpiry   = 0x02
	propContentType     = 0x03
	propResponseTopic   = 0x08
	propCorrelationData = 0x09
	propSubscriptionID  = 0x0B
	propTopicAlias      = 0x23
	propUser            = 0x26
)

// foldSubIDs rewrites into out the PUBLISH p, whose variable header
// starts at p[v:], when it carries several subscription identifiers or a
// subIDsKey user property, and reports whether it did. A malformed one is
// left to paho, which refuses it.
func foldSubIDs(p []byte, v int, out []byte) ([]byte, bool) {
	qos := p[0] >> 1 & 3
	i := v
	tl, ok := uint16At(p, i)
	if !ok {
		return nil, false
	}
	i += 2 + int(tl)
	if qos > 0 {
		i += 2
	}
	plen, n, ok := vbi(p, i)
	if !ok {
		return nil, false
	}
	props, end := i+n, i+n+plen
	if end > len(p) {
		return nil, false
	}
	ids, keep, rewrite, ok := scanProps(p[props:end])
	if !ok || !rewrite && len(ids) < 2 {
		return nil, false
	}
	np := keep
	if len(ids) > 0 {
		np = appendUserProp(np, subIDsKey, joinIDs(ids))
	}
	body := len(p) - end
	rl := (i - v) + vbiLen(len(np)) + len(np) + body
	out = append(out, p[0])
	out = appendVBI(out, rl)
	out = append(out, p[v:i]...)
	out = appendVBI(out, len(np))
	out = append(out, np...)
	out = append(out, p[end:]...)
	return out, true
}

// scanProps reads PUBLISH properties: it returns the subscription
// identifiers, the other properties but any subIDsKey user property,
// whether there was one, and whether they parsed.
func scanProps(b []byte) (ids []uint32, keep []byte, foreign, ok bool) {
	for i := 0; i < len(b); {
		start := i
		id := b[i]
		i++
		var n int
		switch id {
		case propPayloadFormat:
			n = 1
		case propMessageExpiry:
			n = 4
		case propTopicAlias:
			n = 2
		case propContentType, propResponseTopic, propCorrelationData:
			l, ok := uint16At(b, i)
			if !ok {
				return nil, nil, false, false
			}
			n = 2 + int(l)
		case propSubscriptionID:
			v, m, ok := vbi(b, i)
			if !ok {
				return nil, nil, false, false
			}
			ids = append(ids, uint32(v))
			i += m
			continue
		case propUser:
			k, ok1 := uint16At(b, i)
			vl, ok2 := uint16At(b, i+2+int(k))
			if !ok1 || !ok2 {
				return nil, nil, false, false
			}
			n = 4 + int(k) + int(vl)
			if i+n > len(b) {
				return nil, nil, false, false
			}
			if string(b[i+2:i+2+int(k)]) == subIDsKey {
				foreign = true
				i += n
				continue
			}
		default:
			return nil, nil, false, false
		}
		if i += n; i > len(b) {
			return nil, nil, false, false
		}
		keep = append(keep, b[start:i]...)
	}
	return ids, keep, foreign, true
}

// parseSubIDs parses the value of a subIDsKey user property.
func parseSubIDs(v string, dst []uint32) []uint32 {
	for f := range strings.SplitSeq(v, ",") {
		if n, err := strconv.ParseUint(f, 10, 32); err == nil {
			dst = append(dst, uint32(n))
		}
	}
	return dst
}

func joinIDs(ids []uint32) string {
	var b []byte
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(b, uint64(id), 10)
	}
	return string(b)
}

func appendUserProp(b []byte, k, v string) []byte {
	b = append(b, propUser, byte(len(k)>>8), byte(len(k)))
	b = append(b, k...)
	b = append(b, byte(len(v)>>8), byte(len(v)))
	return append(b, v...)
}

func uint16At(b []byte, i int) (uint16, bool) {
	if i+2 > len(b) || i < 0 {
		return 0, false
	}
	return uint16(b[i])<<8 | uint16(b[i+1]), true
}

// vbi decodes a variable byte integer at b[i:]: its value and length.
func vbi(b []byte, i int) (v, n int, ok bool) {
	mult := 1
	for n < 4 && i+n < len(b) {
		c := b[i+n]
		n++
		v += int(c&0x7f) * mult
		if c < 0x80 {
			return v, n, true
		}
		mult <<= 7
	}
	return 0, 0, false
}

func vbiLen(v int) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

func appendVBI(b []byte, v int) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v > 0 {
			c |= 0x80
		}
		b = append(b, c)
		if v == 0 {
			return b
		}
	}
}
