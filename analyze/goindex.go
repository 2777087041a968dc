package analyze

import "golang.org/x/exp/trace"

// goIndex gives each live goroutine a dense slot, so the accumulators keep
// per-goroutine state in pointer-free slices indexed by slot and the whole
// analysis does one map lookup per goroutine transition. The slot of an
// exited goroutine is reused. Not safe for concurrent use.
type goIndex struct {
	slot map[trace.GoID]int32
	ids  []trace.GoID // slot -> goroutine, trace.NoGoroutine when free
	free []int32
	// cache is a direct-mapped cache in front of slot: busy traces switch
	// among few goroutines at a time. Entries hold slot+1 (0 is empty);
	// a hit is checked against ids.
	cache [256]int32
}

func newGoIndex() *goIndex { return &goIndex{slot: make(map[trace.GoID]int32)} }

// get returns id's slot; fresh reports that the slot was just assigned and
// its state must be reset.
func (x *goIndex) get(id trace.GoID) (slot int32, fresh bool) {
	if i, ok := x.find(id); ok {
		return i, false
	}
	if n := len(x.free); n > 0 {
		slot = x.free[n-1]
		x.free = x.free[:n-1]
		x.ids[slot] = id
	} else {
		slot = int32(len(x.ids))
		x.ids = append(x.ids, id)
	}
	x.slot[id] = slot
	x.cache[uint64(id)&255] = slot + 1
	return slot, true
}

// find returns id's slot if it is live.
func (x *goIndex) find(id trace.GoID) (int32, bool) {
	c := &x.cache[uint64(id)&255]
	if i := *c - 1; i >= 0 && x.ids[i] == id {
		return i, true
	}
	i, ok := x.slot[id]
	if ok {
		*c = i + 1
	}
	return i, ok
}

// release frees id's slot.
func (x *goIndex) release(id trace.GoID, slot int32) {
	delete(x.slot, id)
	x.ids[slot] = trace.NoGoroutine
	x.free = append(x.free, slot)
}

// grow extends s so that index slot exists.
func grow[T any](s []T, slot int32) []T {
	for int32(len(s)) <= slot {
		var zero T
		s = append(s, zero)
	}
	return s
}
