package scan

import "hash/maphash"

// idIndex maps the entry ids of a log to node indexes. It is an
// open-addressing table of id hashes: no pointers for the garbage collector
// to scan, and one cache miss to insert an id or to learn it is new (the
// common case: a log's ids are all distinct). Ids themselves are compared
// only where hashes match.
type idIndex struct {
	slots []idSlot
	n     int
	taken []string // ids of invalid entries: used, but not nodes
}

// prefetch asks for the slot where the probe for an id hashed h starts,
// ahead of its find.
func (x *idIndex) prefetch(h uint64) { prefetch(&x.slots[int(h)&(len(x.slots)-1)]) }

// idSlot is eight bytes, so that the table of a large log stays small in
// the caches: the high half of the hash (the low half picks the slot) and
// the value.
type idSlot struct {
	tag uint32 // 0: empty
	v   int32  // a node index, or -1-i for taken[i]
}

// tagOf is the part of hash h a slot keeps; never 0.
func tagOf(h uint64) uint32 { return uint32(h>>32) | 1 }

// idSeed keys the hashes of every index in this process.
var idSeed = maphash.MakeSeed()

// hashID hashes an entry id for the index.
func hashID(id string) uint64 { return maphash.String(idSeed, id) }

// reuse returns an empty index with room for capacity ids, in x's memory
// when that is the size it needs (the zero idIndex has none).
func (x idIndex) reuse(capacity int) idIndex {
	size := 16
	for 3*size < 4*capacity {
		size *= 2
	}
	if len(x.slots) != size {
		return idIndex{slots: touched(size)}
	}
	clear(x.slots)
	clear(x.taken)
	return idIndex{slots: x.slots, taken: x.taken[:0]}
}

// touched makes n empty slots and writes to each of their pages first: a
// page of fresh memory that a probe reads before anything is written to it
// maps the shared zero page, and the first write then costs a second fault
// and a TLB flush on every core.
func touched(n int) []idSlot {
	s := make([]idSlot, n)
	for i := 0; i < n; i += 4096 / 8 { // eight-byte slots
		s[i] = idSlot{}
	}
	return s
}

// find returns the slot of id (hashed h) and its value, or the empty slot
// where it would go and found false.
func (x *idIndex) find(h uint64, id string, l *Log) (slot int, v int32, found bool) {
	mask, tag := len(x.slots)-1, tagOf(h)
	for s := int(h) & mask; ; s = (s + 1) & mask {
		switch e := x.slots[s]; {
		case e.tag == 0:
			return s, 0, false
		case e.tag == tag && x.is(e.v, id, l):
			return s, e.v, true
		}
	}
}

// is reports whether value v stands for id.
func (x *idIndex) is(v int32, id string, l *Log) bool {
	if v >= 0 {
		return string(l.id(v)) == id
	}
	return x.taken[-1-v] == id
}

// put stores v for an id (hashed h) that find did not find, in its slot.
func (x *idIndex) put(slot int, h uint64, v int32, l *Log) {
	x.slots[slot] = idSlot{tagOf(h), v}
	x.n++
	if 4*x.n <= 3*len(x.slots) { // linear probing stays short below 3/4 full
		return
	}
	old := x.slots
	x.slots = touched(2 * len(old))
	mask := len(x.slots) - 1
	for _, e := range old {
		if e.tag == 0 {
			continue
		}
		// The slot keeps only half the hash: hash the id again.
		var s int
		if e.v >= 0 {
			s = int(maphash.Bytes(idSeed, l.id(e.v))) & mask
		} else {
			s = int(hashID(x.taken[-1-e.v])) & mask
		}
		for x.slots[s].tag != 0 {
			s = (s + 1) & mask
		}
		x.slots[s] = e
	}
}
