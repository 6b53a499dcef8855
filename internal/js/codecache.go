package js

import (
	"container/list"
	"sync"
)

// codeCache keeps V8 code caches of compiled modules (and transformed
// sources) across processes, keyed by the digest of the source, bounded
// by total bytes with least-recently-used eviction. A code cache only
// speeds compilation up: V8 verifies it against the source and rejects
// a mismatch, so a stale or foreign entry cannot change behaviour.
type codeCache struct {
	mu    sync.Mutex
	max   int
	size  int
	order *list.List
	items map[string]*list.Element
}

type cacheItem struct {
	key  string
	data []byte
}

func newCodeCache(maxBytes int) *codeCache {
	return &codeCache{max: maxBytes, order: list.New(), items: map[string]*list.Element{}}
}

func (c *codeCache) get(key string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*cacheItem).data, true
}

func (c *codeCache) put(key string, data []byte) {
	if len(data) > c.max/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		c.size -= len(el.Value.(*cacheItem).data)
		el.Value.(*cacheItem).data = data
		c.size += len(data)
		c.order.MoveToFront(el)
	} else {
		c.items[key] = c.order.PushFront(&cacheItem{key: key, data: data})
		c.size += len(data)
	}
	for c.size > c.max && c.order.Len() > 0 {
		el := c.order.Back()
		it := el.Value.(*cacheItem)
		c.order.Remove(el)
		delete(c.items, it.key)
		c.size -= len(it.data)
	}
}
