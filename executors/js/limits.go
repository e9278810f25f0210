package js

// How each limit is enforced.
//
// Wall time: a timer interrupts the VM (goja.Runtime.Interrupt), which stops
// at the next bytecode instruction, so tight loops, await loops and endless
// microtask chains stop at once. A call whose promise never settles is
// stopped by the same timer; a cancelled ctx stops a call the same way. A
// VM stuck inside one native operation (a backtracking regular expression,
// a huge join) cannot be interrupted: Execute returns abandonAfter after
// the stop anyway, and the next call waits for the stuck one to finish.
//
// Memory: goja keeps no account of its own allocations, so the executor
// watches the process heap. Calls run one at a time in the process (a
// package-level lock), so heap growth during a call is that call's. The
// supervisor samples runtime/metrics "/memory/classes/heap/objects:bytes"
// every memSampleEvery; when the growth since the call began passes the
// limit it forces a GC (the sample counts unswept garbage too) and, if the
// growth is still over, interrupts the call with a memory limit error. The
// same check runs once more when the call ends, while its realm is still
// reachable, so a call that finishes between two samples is held to the
// limit too. What is limited is live heap growth: garbage is not charged,
// and under GOGC=100 keeps the heap below about twice base plus limit.
//
// Precision, measured by TestMemoryBombs with a 64 MiB limit on two busy
// cores: loops that grow arrays, objects, maps or strings step by step are
// stopped 0.2 to 28 MiB past the limit (usually under 11 MiB), within 0.1
// to 1.5 s; the stop lands one sample interval plus one forced GC's worth
// of allocation late, and later when the machine is loaded and samples are
// delayed.
// Two cases overshoot by more, because one step is one native operation
// that cannot be interrupted: a string doubling in a loop is stopped within
// two doublings (128 to 384 MiB past a 64 MiB limit), three when samples
// come late on a loaded machine (832 MiB once, under -race). The
// executor's own memory cap (cgroup or container) is the hard ceiling. The realm's
// String.prototype.repeat, padStart, padEnd, Array.prototype.join and fill,
// JSON.stringify, and the ArrayBuffer, typed array and Array constructors
// (alloc.go) check their result size up front against the limit minus the
// growth the last GC confirmed, so one call like 'x'.repeat(2 ** 30) or
// new ArrayBuffer(2 ** 31) is refused before it allocates (a buffer's pages
// are zeroed lazily by the OS, so the heap watchdog alone would let a
// never-touched one through). A call is not credited with garbage it
// inherited: after a call that grew the heap by more than a quarter of its
// limit or was stopped, the next call forces a GC before it measures.
//
// debug.SetMemoryLimit is not used: it is process-wide, it only makes the
// GC work harder rather than stopping anything, and it would fight the
// daemon or a test binary when the executor runs in-process. The hard
// ceiling is the executor process's own memory cap (cgroup or container),
// which the host sets; an executor that dies there is replaced.
//
// Output: console lines are kept up to OutputBytes while the call runs and
// dropped after (Result.Truncated is set). When the call ends, a result
// larger than OutputBytes fails with an output limit error; otherwise lines
// are trimmed from the end until result and logs fit together.

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dop251/goja"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
	"github.com/toolcage/toolcage/policy/netguard"
)

const (
	// memSampleEvery is how often the heap is sampled during a call.
	memSampleEvery = time.Millisecond
	// abandonAfter is how long a stopped call may take to notice before
	// Execute returns without it.
	abandonAfter = 100 * time.Millisecond
	// maxCodeBytes bounds a tool's code. goja's parser is recursive, so
	// this also bounds how deep hostile nesting can drive it.
	maxCodeBytes = 256 << 10
	// maxCallStackSize bounds JavaScript call depth; past it a call throws
	// "RangeError: Maximum call stack size exceeded".
	maxCallStackSize = 10000
	// guardMinBytes is the smallest up-front allocation worth checking.
	guardMinBytes = 64 << 10
	// programCacheBytes bounds the code held by the compiled-program cache.
	programCacheBytes = 16 << 20
)

// call is the state of one Execute call, shared by the VM goroutine and
// the supervisor.
type call struct {
	req    *executors.Request
	lim    executors.Limits
	guards *netguard.Cache // fetch's, the executor's
	mem    *memWatch
	out    output // VM goroutine only, then read by the supervisor after done
	// state is the worker's state (state.go), nil when the call has
	// none; like out, the VM goroutine's until done.
	state *jsState

	mu      sync.Mutex
	rt      *goja.Runtime
	stopErr *errdefs.Error
	stopped atomic.Bool
}

func newCall(req *executors.Request, lim executors.Limits) *call {
	c := &call{
		req: req,
		lim: lim,
		mem: newMemWatch(lim.MemoryBytes),
		out: output{limit: lim.OutputBytes},
	}
	if req.JS != nil {
		c.state = newJSState(req.JS.State)
	}
	return c
}

// attach records the call's runtime, interrupting it at once if the call
// was stopped before the runtime existed.
func (c *call) attach(rt *goja.Runtime) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rt = rt
	if c.stopErr != nil {
		rt.Interrupt(c.stopErr)
	}
}

// stop records why the call must end and interrupts its VM. The first
// reason wins.
func (c *call) stop(err *errdefs.Error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopErr != nil {
		return
	}
	c.stopErr = err
	c.stopped.Store(true)
	if c.rt != nil {
		c.rt.Interrupt(err)
	}
}

// stopReason returns the error the call was stopped with, or nil.
func (c *call) stopReason() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopErr == nil {
		return nil
	}
	return c.stopErr
}

// reserve is called by native operations before one large allocation. It
// stops the call and returns false when bytes would break the memory
// limit. fresh says the bytes are surely new (a new string): they are then
// added to the heap growth the last forced GC confirmed as live. Otherwise
// only the request on its own is held against the limit, since the
// operation may fill memory that is already counted. Unconfirmed growth is
// never used here: it may be garbage.
func (c *call) reserve(bytes int64, fresh bool, what string) bool {
	if bytes < guardMinBytes {
		return true
	}
	limit := uint64(c.lim.MemoryBytes)
	want := uint64(bytes)
	if fresh {
		want += c.mem.live.Load()
	}
	if want > limit {
		c.stop(errdefs.LimitError(errdefs.LimitMemory, "js: %s would allocate %s, over the call's %s memory limit", what, sizeString(uint64(bytes)), sizeString(limit)))
		return false
	}
	return true
}

// The heap metrics the watchdog reads.
const (
	heapObjectsMetric = "/memory/classes/heap/objects:bytes"
	heapLiveMetric    = "/gc/heap/live:bytes"
)

// memWatch measures how far the process heap grew since a call began.
type memWatch struct {
	limit uint64
	base  uint64
	peak  atomic.Uint64
	// live is the growth the last forced GC measured: live data, not
	// garbage.
	live atomic.Uint64

	// mu serialises check between the supervisor and the VM goroutine.
	mu sync.Mutex
}

// heapDirty is set when a call ended having grown the heap by more than a
// quarter of its limit, or was stopped. The heap is the process's, so this
// is too.
var heapDirty atomic.Bool

// newMemWatch starts measuring. Garbage from earlier calls would be
// credited to this call when a GC frees it, so it is collected first when
// an earlier call left much behind (heapDirty) or the heap holds more than
// a quarter of the limit beyond what the last GC found live.
func newMemWatch(limit int64) *memWatch {
	m := &memWatch{limit: uint64(limit)}
	s := []metrics.Sample{{Name: heapObjectsMetric}, {Name: heapLiveMetric}}
	metrics.Read(s)
	objects, live := s[0].Value.Uint64(), s[1].Value.Uint64()
	if heapDirty.Swap(false) || objects > live+m.limit/4 {
		runtime.GC()
		metrics.Read(s[:1])
		objects = s[0].Value.Uint64()
	}
	m.base = objects
	return m
}

// done records, for the next call, whether this one left much garbage.
func (m *memWatch) done(stopped bool) {
	if stopped || m.peak.Load() > m.limit/4 {
		heapDirty.Store(true)
	}
}

// grown samples the heap and returns its growth since the call began.
func (m *memWatch) grown() uint64 {
	s := [1]metrics.Sample{{Name: heapObjectsMetric}}
	metrics.Read(s[:])
	cur := s[0].Value.Uint64()
	if cur <= m.base {
		return 0
	}
	g := cur - m.base
	for {
		p := m.peak.Load()
		if g <= p || m.peak.CompareAndSwap(p, g) {
			break
		}
	}
	return g
}

// check returns a memory limit error when the heap grew past the limit.
// The sample counts garbage not yet swept, so a sample over the limit is
// confirmed after a forced GC before the call is stopped. A call whose
// live data sits just under its limit while it churns garbage pays for a
// GC whenever the garbage fills the gap; that is the price of not counting
// garbage.
func (m *memWatch) check() *errdefs.Error {
	if m.grown() <= m.limit {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	runtime.GC()
	g := m.grown()
	m.live.Store(g)
	if g <= m.limit {
		return nil
	}
	return errdefs.LimitError(errdefs.LimitMemory, "js: call exceeded its %s memory limit (heap grew by %s)", sizeString(m.limit), sizeString(g))
}

// output collects console lines up to the output limit.
type output struct {
	limit     int64
	used      int64
	lines     []executors.LogLine
	truncated bool
}

// add keeps a line if it fits; once one line is dropped, all later lines
// are dropped too, so the kept lines are a prefix of what was logged.
func (o *output) add(level, msg string) {
	if o.truncated {
		return
	}
	if o.used+int64(len(msg)) > o.limit {
		o.truncated = true
		return
	}
	o.used += int64(len(msg))
	o.lines = append(o.lines, executors.LogLine{Level: level, Message: msg})
}

// sizeString formats a byte count for messages.
func sizeString(n uint64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
