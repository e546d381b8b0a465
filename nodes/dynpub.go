package nodes

import (
	"container/list"

	"github.com/robotexec/robotexec/subscribers"
)

// maxDynPublishers is how many publishers of topics known at run time
// ([Node.Publish]) a node keeps; the least recently used goes first.
const maxDynPublishers = 1024

// dynPublishers is Node.Publish's cache; the node's mu guards it.
type dynPublishers struct {
	m   map[pubKey]*list.Element
	lru list.List // of dynEntry, least recently used first
}

type dynEntry struct {
	key pubKey
	p   *subscribers.Publisher
}

func (d *dynPublishers) get(key pubKey) *subscribers.Publisher {
	e, ok := d.m[key]
	if !ok {
		return nil
	}
	d.lru.MoveToBack(e)
	return e.Value.(dynEntry).p
}

func (d *dynPublishers) add(key pubKey, p *subscribers.Publisher) {
	if d.m == nil {
		d.m = make(map[pubKey]*list.Element)
		d.lru.Init()
	}
	if _, ok := d.m[key]; ok {
		return // made twice at once: keep the first
	}
	if len(d.m) >= maxDynPublishers {
		delete(d.m, d.lru.Remove(d.lru.Front()).(dynEntry).key)
	}
	d.m[key] = d.lru.PushBack(dynEntry{key: key, p: p})
}
