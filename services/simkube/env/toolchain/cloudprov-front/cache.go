package main

import (
	"container/list"
	"sync"
)

// entryOverhead is what an entry costs beyond its key and answer (list element, map slot),
// counted so that many small entries cannot outgrow the limit.
const entryOverhead = 96

type entry struct {
	key   string
	value []byte
}

// answerCache is a least-recently-used map from a call (method and canonical request) to
// its answer's bytes, bounded by the bytes it holds. Every clear moves its generation; an
// answer fetched under an older generation is not stored, so a call that was in flight
// when the upstream went away cannot bring back what the clear removed.
type answerCache struct {
	mu         sync.Mutex
	limit      int
	size       int
	order      *list.List // most recently used first
	items      map[string]*list.Element
	generation uint64
}

func newAnswerCache(limit int) *answerCache {
	return &answerCache{limit: limit, order: list.New(), items: map[string]*list.Element{}}
}

func cost(key string, value []byte) int { return len(key) + len(value) + entryOverhead }

func (c *answerCache) get(key string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	element, ok := c.items[key]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(element)
	return element.Value.(*entry).value, true
}

// current is the generation to pass to put for an answer about to be fetched.
func (c *answerCache) current() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.generation
}

// put stores value under key unless the cache was cleared since generation or the entry
// alone exceeds the limit; older entries make room. It reports whether it stored.
func (c *answerCache) put(key string, value []byte, generation uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	size := cost(key, value)
	if generation != c.generation || size > c.limit {
		return false
	}
	if element, ok := c.items[key]; ok {
		c.size -= cost(key, element.Value.(*entry).value)
		c.order.Remove(element)
	}
	for c.size+size > c.limit {
		oldest := c.order.Back()
		old := oldest.Value.(*entry)
		c.order.Remove(oldest)
		delete(c.items, old.key)
		c.size -= cost(old.key, old.value)
	}
	c.items[key] = c.order.PushFront(&entry{key: key, value: value})
	c.size += size
	return true
}

// clear forgets every answer and starts a new generation.
func (c *answerCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.order.Init()
	c.items = map[string]*list.Element{}
	c.size = 0
	c.generation++
}

// stats is the number of entries and the bytes they are counted at.
func (c *answerCache) stats() (int, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.items), c.size
}
