package analyze

import "golang.org/x/exp/trace"

// goIndex gives each live goroutine a dense slot, so the accumulators keep
// per-goroutine state in pointer-free slices indexed by slot. The slot of
// an exited goroutine is reused. Its lookup is an open-addressing hash
// table with linear probing (the runtime's map cost a fifth of the
// analyzers' time on a trace of a busy HTTP server, where thousands of
// goroutines interleave). Not safe for concurrent use.
type goIndex struct {
	keys  []trace.GoID // the table; entries with vals 0 are empty
	vals  []int32      // slot+1, 0 when empty
	shift uint         // 64 - log2(len(keys))
	live  int          // goroutines in the table
	ids   []trace.GoID // slot -> goroutine, trace.NoGoroutine when free
	free  []int32
}

const goIndexMinBits = 8

func newGoIndex() *goIndex {
	x := &goIndex{}
	x.resize(goIndexMinBits)
	return x
}

func (x *goIndex) resize(bits uint) {
	keys, vals := x.keys, x.vals
	x.keys = make([]trace.GoID, 1<<bits)
	x.vals = make([]int32, 1<<bits)
	x.shift = 64 - bits
	for i, v := range vals {
		if v != 0 {
			x.insert(keys[i], v)
		}
	}
}

// home is id's first probe position (Fibonacci hashing).
func (x *goIndex) home(id trace.GoID) int {
	return int((uint64(id) * 0x9e3779b97f4a7c15) >> x.shift)
}

func (x *goIndex) insert(id trace.GoID, v int32) {
	mask := len(x.keys) - 1
	for i := x.home(id); ; i = (i + 1) & mask {
		if x.vals[i] == 0 {
			x.keys[i], x.vals[i] = id, v
			return
		}
	}
}

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
	if 2*(x.live+1) > len(x.keys) {
		x.resize(64 - x.shift + 1)
	}
	x.insert(id, slot+1)
	x.live++
	return slot, true
}

// find returns id's slot if it is live.
func (x *goIndex) find(id trace.GoID) (int32, bool) {
	mask := len(x.keys) - 1
	for i := x.home(id); ; i = (i + 1) & mask {
		v := x.vals[i]
		if v == 0 {
			return -1, false
		}
		if x.keys[i] == id {
			return v - 1, true
		}
	}
}

// release frees id's slot.
func (x *goIndex) release(id trace.GoID, slot int32) {
	mask := len(x.keys) - 1
	i := x.home(id)
	for ; x.vals[i] != 0; i = (i + 1) & mask {
		if x.keys[i] == id {
			break
		}
	}
	if x.vals[i] == 0 {
		return
	}
	// Backward-shift deletion: move later entries of the probe run into
	// the hole when their home position allows it.
	for j := (i + 1) & mask; x.vals[j] != 0; j = (j + 1) & mask {
		if h := x.home(x.keys[j]); (j-h)&mask >= (j-i)&mask {
			x.keys[i], x.vals[i] = x.keys[j], x.vals[j]
			i = j
		}
	}
	x.vals[i] = 0
	x.live--
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

// threadIndex numbers threads densely in order of first sight. A
// direct-mapped cache in front of its map serves most lookups: a trace has
// few threads, and its events switch among them all the time. Not safe for
// concurrent use.
type threadIndex struct {
	byID  map[trace.ThreadID]int32
	cache [64]threadSlot
}

type threadSlot struct {
	th trace.ThreadID
	i  int32 // index+1; 0 when empty
}

func newThreadIndex() *threadIndex {
	return &threadIndex{byID: make(map[trace.ThreadID]int32)}
}

func (x *threadIndex) slot(th trace.ThreadID) *threadSlot {
	return &x.cache[(uint64(th)*0x9e3779b97f4a7c15)>>58]
}

// lookup returns th's index if th has been seen.
func (x *threadIndex) lookup(th trace.ThreadID) (int32, bool) {
	c := x.slot(th)
	if c.i != 0 && c.th == th {
		return c.i - 1, true
	}
	i, ok := x.byID[th]
	if ok {
		*c = threadSlot{th, i + 1}
	}
	return i, ok
}

// index returns th's index, assigning the next one (fresh) on first sight.
func (x *threadIndex) index(th trace.ThreadID) (i int32, fresh bool) {
	if i, ok := x.lookup(th); ok {
		return i, false
	}
	i = int32(len(x.byID))
	x.byID[th] = i
	*x.slot(th) = threadSlot{th, i + 1}
	return i, true
}

// len returns how many threads have been seen.
func (x *threadIndex) len() int { return len(x.byID) }
