package main

import "testing"

func TestCacheEvictsLeastRecentlyUsedWithinItsBytes(t *testing.T) {
	limit := 3 * cost("k1", []byte("vv"))
	c := newAnswerCache(limit)
	for _, k := range []string{"k1", "k2", "k3"} {
		if !c.put(k, []byte("vv"), c.current()) {
			t.Fatalf("put %s refused", k)
		}
	}
	if _, ok := c.get("k1"); !ok { // k1 is now the most recently used
		t.Fatal("k1 missing")
	}
	c.put("k4", []byte("vv"), c.current())
	if _, ok := c.get("k2"); ok {
		t.Fatal("k2, the least recently used, should have made room")
	}
	for _, k := range []string{"k1", "k3", "k4"} {
		if _, ok := c.get(k); !ok {
			t.Fatalf("%s missing", k)
		}
	}
	if n, size := c.stats(); n != 3 || size != limit {
		t.Fatalf("stats = %d entries, %d bytes; want 3, %d", n, size, limit)
	}
}

func TestCacheReplacesAnEntryWithoutCountingItTwice(t *testing.T) {
	c := newAnswerCache(1 << 20)
	c.put("k", []byte("old"), c.current())
	c.put("k", []byte("newer"), c.current())
	value, _ := c.get("k")
	if n, size := c.stats(); string(value) != "newer" || n != 1 || size != cost("k", value) {
		t.Fatalf("got %q, %d entries, %d bytes", value, n, size)
	}
}

func TestCacheRefusesAnEntryLargerThanItsBound(t *testing.T) {
	c := newAnswerCache(entryOverhead + 4)
	if c.put("key", []byte("value"), c.current()) {
		t.Fatal("an entry over the bound was stored")
	}
}

func TestAnswerFetchedBeforeAClearIsNotStored(t *testing.T) {
	c := newAnswerCache(1 << 20)
	c.put("kept", []byte("a"), c.current())
	generation := c.current() // a call goes upstream...
	c.clear()                 // ...the connection is lost meanwhile
	if c.put("late", []byte("b"), generation) {
		t.Fatal("an answer from before the clear was stored")
	}
	if _, ok := c.get("kept"); ok {
		t.Fatal("clear left an entry")
	}
	if !c.put("late", []byte("b"), c.current()) {
		t.Fatal("an answer of the current generation was refused")
	}
}
