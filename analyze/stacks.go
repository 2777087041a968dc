package analyze

import (
	"encoding/binary"
	"strings"

	"golang.org/x/exp/trace"
)

// stackID indexes stackTable.infos; 0 is the empty stack.
type stackID int32

// stackInfo is an interned stack with what the analyzers derive from it.
type stackInfo struct {
	frames []Frame // leaf first
	pcs    []uint64
	site   int    // index in frames of the call site (first user frame), -1 if none
	root   string // the outermost frame's function: the goroutine's start function
	cgo    string // the _Cfunc_ function when this is a cgo call, else ""
}

// sitePC is the PC identifying the call site, or 0.
func (s *stackInfo) sitePC() uint64 {
	if s.site < 0 {
		return 0
	}
	return s.pcs[s.site]
}

func (s *stackInfo) siteFrame() Frame {
	if s.site < 0 {
		if len(s.frames) > 0 {
			return s.frames[0]
		}
		return Frame{Func: "(no stack)"}
	}
	return s.frames[s.site]
}

// stackTable interns trace stacks by their PCs, so analyzers keep a small
// integer per goroutine instead of a trace.Stack (which pins a whole
// generation's tables). trace.Stack handles are only optimistically
// comparable, and only within a generation: the handle cache is cleared at
// each Sync event. It belongs to the decoder; the stackInfo of each new
// stack goes to the accumulators' stackInfos through takeNew, in id order.
// Not safe for concurrent use.
type stackTable struct {
	cache   map[trace.Stack]stackID
	byPCs   map[string]stackID
	strs    map[string]string
	n       stackID     // stacks interned, the empty one included
	fresh   []stackInfo // interned since the last takeNew
	keyBuf  []byte
	scratch []trace.StackFrame
}

func newStackTable() *stackTable {
	return &stackTable{
		cache: make(map[trace.Stack]stackID),
		byPCs: make(map[string]stackID),
		strs:  make(map[string]string),
		n:     1,
		fresh: []stackInfo{{site: -1}}, // id 0, the empty stack
	}
}

// newGeneration forgets this generation's stack handles.
func (t *stackTable) newGeneration() { clear(t.cache) }

// takeNew appends the stacks interned since the last call to infos and
// returns it.
func (t *stackTable) takeNew(infos stackInfos) stackInfos {
	infos = append(infos, t.fresh...)
	clear(t.fresh) // drop the references; the backing array is reused
	t.fresh = t.fresh[:0]
	return infos
}

func (t *stackTable) str(s string) string {
	if v, ok := t.strs[s]; ok {
		return v
	}
	v := strings.Clone(s)
	t.strs[v] = v
	return v
}

// intern returns the id of s.
func (t *stackTable) intern(s trace.Stack) stackID {
	if s == trace.NoStack {
		return 0
	}
	if id, ok := t.cache[s]; ok {
		return id
	}
	t.scratch = t.scratch[:0]
	for f := range s.Frames() {
		t.scratch = append(t.scratch, f)
	}
	if len(t.scratch) == 0 {
		t.cache[s] = 0
		return 0
	}
	t.keyBuf = t.keyBuf[:0]
	for _, f := range t.scratch {
		t.keyBuf = binary.LittleEndian.AppendUint64(t.keyBuf, f.PC)
	}
	if id, ok := t.byPCs[string(t.keyBuf)]; ok {
		t.cache[s] = id
		return id
	}
	info := stackInfo{site: -1}
	for i, f := range t.scratch {
		info.frames = append(info.frames, Frame{Func: t.str(f.Func), File: t.str(f.File), Line: int64(f.Line)})
		info.pcs = append(info.pcs, f.PC)
		if info.cgo == "" && strings.Contains(f.Func, "._Cfunc_") {
			info.cgo = info.frames[i].Func
		}
		if info.site < 0 && isUserFrame(f.Func) {
			info.site = i
		}
	}
	info.root = info.frames[len(info.frames)-1].Func
	id := t.n
	t.n++
	t.fresh = append(t.fresh, info)
	t.byPCs[string(t.keyBuf)] = id
	t.cache[s] = id
	return id
}

// stackInfos holds the interned stacks by id, on the accumulators' side.
type stackInfos []stackInfo

func (s stackInfos) info(id stackID) *stackInfo { return &s[id] }

// isUserFrame reports whether a frame is the code that made a blocking call,
// rather than the runtime or standard-library plumbing under it.
func isUserFrame(fn string) bool {
	for _, p := range []string{"runtime.", "runtime/", "internal/", "syscall.", "sync.", "sync/", "time.Sleep", "golang.org/x/sys/", "_cgo_"} {
		if strings.HasPrefix(fn, p) {
			return false
		}
	}
	return !strings.Contains(fn, "._Cfunc_") && !strings.Contains(fn, "._cgo_")
}

// isTracerFunc reports whether a start function is the execution tracer's
// own writer goroutine (runtime/trace.Start, or a flight recorder).
func isTracerFunc(fn string) bool {
	return strings.HasPrefix(fn, "runtime/trace.") || strings.HasPrefix(fn, "golang.org/x/exp/trace.") ||
		strings.HasPrefix(fn, "runtime.traceStartReadCPU") || strings.HasPrefix(fn, "runtime.(*traceAdvancerState)")
}
