package js

import (
	"container/heap"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	v8 "github.com/tommie/v8go"

	"github.com/secexec/secexec/internal/js/modules"
	"github.com/secexec/secexec/internal/js/nodecli"
	"github.com/secexec/secexec/internal/jsctx"
	"github.com/secexec/secexec/internal/node/h2"
	"github.com/secexec/secexec/kernel"
)

// rt is the runtime of one node process: its isolate, context, bridge
// and event loop. All V8 calls happen on the goroutine running Run; other
// goroutines (host operations, watchdogs) only post events to the loop,
// call TerminateExecution, or read heap statistics, which V8 allows
// without the isolate's lock.
type rt struct {
	// heapLimit and extLimit bound this isolate's heap and its memory
	// outside the heap (ArrayBuffers): the engine's, or the VM's own.
	heapLimit, extLimit uint64
	e                   *Engine
	p                   *kernel.Process
	ctx                 context.Context // the process context: cancelled on kill

	iso *v8.Isolate
	v8c *v8.Context

	start    *v8.Function
	dispatch *v8.Function
	beforeEx *v8.Function
	exitFn   *v8.Function

	// rejectRun settles the promise rejections V8 reported (see
	// rejections.go) after each macrotask, as Node's
	// processTicksAndRejections does. rejectIso is nil when the hook is
	// not installed.
	rejectRun *v8.Function
	rejectIso unsafe.Pointer

	scratch        []byte
	scratchRelease func()

	// release holds values handed back to V8 by the previous bridge call;
	// they are released at the next one, when V8 has taken them over.
	release  []*v8.Value
	argsFree []*callArgs          // decoded-argument buffers for bridge calls
	strs     map[string]*v8.Value // interned strings (event kinds, errnos)
	interned map[*v8.Value]struct{}

	blobs     map[int]*blob
	blobBytes int64
	nextBlob  int

	crypto *cryptoState // see bridge_crypto_state.go

	// exit state
	exited   bool
	exitCode int

	// why the isolate was terminated, if it was
	terminated atomic.Int32

	// the loop
	events   chan event
	timers   timerHeap
	timerMap map[int]*timer
	refTimer int
	readers  map[int]*reader
	children map[int]*child
	writes   int // async writes in flight
	pending  int // other asynchronous requests in flight (connect, dns)
	sni      sniWaits
	// listening sockets being accepted on, by handle
	acceptors map[int]*acceptor
	sigWatch  map[kernel.Signal]bool
	sigint    sigintBreak // ^C breaking a REPL evaluation (bridge_repl.go)
	// sigInFlight counts caught signals taken from the kernel and not
	// yet dispatched (bridge_io.go watchSignal).
	sigInFlight atomic.Int32
	// HTTP/2 client and server sessions and their streams
	// (bridge_http2.go): nil until first used
	h2c   *h2.Client
	h2srv *h2.Server

	pendingCaches []*pendingCache
	res           *modules.Resolver

	// ctxs serves a persistent context (context.go); ctxSettle is the
	// bootstrap's function it answers with.
	ctxs      *ctxServer
	ctxSettle *v8.Function

	bootPhases [3]time.Duration
	bootScript *v8.UnboundScript

	startT    time.Time
	lastCheck time.Time

	// worker_threads (worker.go): the process's thread group (nil until
	// a port or worker is made), this thread's worker (nil on the main
	// thread), the wake-up of port deliveries, and what this thread's
	// isolate holds (reported to the kernel with its group's).
	tg        *threadGroup
	worker    *workerThread
	parentCtl *msgPort // a worker's parent's end of its control port
	wake      chan struct{}
	memUsed   atomic.Int64
	cpuClock  kernel.CPUClock
	// A worker's start: its facts, init message and environment.
	workerInfo *workerInfo
	workerInit []byte
	workerEnv  map[string]string
}

// Termination reasons.
const (
	termNone int32 = iota
	termKilled
	termTimeout
	termHeap
	termExternal
	termExit
)

type event struct {
	kind    string
	a, b    int
	c       int
	code    string
	data    []byte
	payload string // a JSON result (addresses, lookups), for net events
	ack     chan struct{}
}

// startInfo is what start() in main.js receives. Clock is the VM's clock
// policy ("coarse", "real", "frozen"): unless real, Date reads the
// kernel's clock as WallBaseMs plus the monotonic clock (process.hrtime)
// in milliseconds. NowMs is the VM's wall clock as the process starts
// (performance.timeOrigin).
type startInfo struct {
	Argv       []string          `json:"argv"`
	Argv0      string            `json:"argv0"`
	ExecArgv   []string          `json:"execArgv"`
	Env        map[string]string `json:"env"`
	Pid        int               `json:"pid"`
	Ppid       int               `json:"ppid"`
	UID        uint32            `json:"uid"`
	GID        uint32            `json:"gid"`
	Mode       nodecli.Mode      `json:"mode"`
	Code       string            `json:"code,omitempty"`
	File       string            `json:"file,omitempty"`
	InputType  string            `json:"inputType,omitempty"`
	Preload    []string          `json:"preload,omitempty"`
	Clock      string            `json:"clock"`
	WallBaseMs float64           `json:"wallBaseMs"`
	NowMs      float64           `json:"nowMs"`
	NoWarnings bool              `json:"noWarnings"`
	REPL       bool              `json:"repl"`
	Worker     *workerInfo       `json:"worker,omitempty"`
}

// runProcess runs one node process to completion and returns its exit
// status.
func runProcess(ctx context.Context, e *Engine, p *kernel.Process, inv *nodecli.Invocation, sess *jsctx.Session) int {
	// V8 binds an isolate's stack limit to the thread that enters it; a
	// process keeps to one OS thread so every entry sees the same stack.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// The process's CPU time is this thread's: the kernel's CPUTime limit
	// counts it instead of wall time.
	clock, stopClock := kernel.ThreadCPUClock()
	p.SetCPUClock(clock)
	defer stopClock()

	var ph phases
	t0 := time.Now()
	var r *rt
	// A VM with its own memory limit needs an isolate with that heap
	// limit: the warm pool is keyed by it (and by the bootstrap).
	heap := e.cfg.HeapLimitBytes
	if lim := p.Kernel().Limits().MemoryBytes; lim > 0 {
		heap = max(uint64(lim), minHeapLimit)
	}
	if e.pool != nil {
		e.pool.begin()
		defer e.pool.end()
		r = e.pool.claim(poolKey{digest: e.bundle.Digest, heap: heap})
	}
	ph.claim = time.Since(t0)
	if r != nil {
		// Isolate, context and bootstrap were made off this path: the
		// phases report none of them.
		ph.hit = true
	} else {
		r = newRT(e)
		r.heapLimit, r.extLimit = heap, e.extLimitFor(heap)
		if err := r.boot(); err != nil {
			r.dispose()
			e.log.Error("js: bootstrap failed", "err", err)
			writeString(ctx, p, 2, "node: internal error: the runtime failed to start\n")
			return 70
		}
		ph.isolateNew, ph.contextNew, ph.bootstrap = r.bootPhases[0], r.bootPhases[1], r.bootPhases[2]
	}
	r.p, r.ctx, r.startT = p, ctx, time.Now()
	r.cpuClock = clock
	if sess != nil {
		r.ctxs = newCtxServer(r, sess, r.ctxSettle)
		r.ctxSettle = nil
	}

	stopWatch := r.watch()
	t1 := time.Now()
	code := r.run(inv)
	ph.userCode = time.Since(t1)
	if r.tg != nil {
		// No worker outlives its process: each is terminated and its
		// thread waited for before the exit status is reported.
		r.tg.release(r)
		r.tg.shutdown()
	}
	stopWatch()
	if r.ctxs != nil {
		r.ctxs.end(code)
	}
	// The isolate is thrown away off the exit path: the status is
	// reported as soon as the program is done.
	e.running.Add(1)
	go func() {
		defer e.running.Done()
		t2 := time.Now()
		r.dispose()
		ph.teardown = time.Since(t2)
		e.reportPhases(&ph, p.PID())
	}()
	return code
}

func newRT(e *Engine) *rt {
	return &rt{
		e:         e,
		heapLimit: e.cfg.HeapLimitBytes,
		extLimit:  e.cfg.ExternalLimitBytes,
		ctx:       context.Background(),
		strs:      map[string]*v8.Value{},
		interned:  map[*v8.Value]struct{}{},
		blobs:     map[int]*blob{},
		events:    make(chan event, 64),
		wake:      make(chan struct{}, 1),
		timerMap:  map[int]*timer{},
		readers:   map[int]*reader{},
		children:  map[int]*child{},
		acceptors: map[int]*acceptor{},
		sigWatch:  map[kernel.Signal]bool{},
		startT:    time.Now(),
	}
}

// boot creates the isolate and context and evaluates the bootstrap.
func (r *rt) boot() error {
	e := r.e
	t0 := time.Now()
	r.iso = v8.NewIsolate(v8.WithResourceConstraints(r.heapLimit/4, r.heapLimit))
	e.live.Add(1)
	t1 := time.Now()
	r.v8c = v8.NewContext(r.iso)
	t2 := time.Now()
	r.bootPhases[0], r.bootPhases[1] = t1.Sub(t0), t2.Sub(t1)
	defer func() { r.bootPhases[2] = time.Since(t2) }()
	if err := r.installBridge(); err != nil {
		return err
	}
	e.mu.Lock()
	cache := e.bootCache
	e.mu.Unlock()
	opts := v8.CompileOptions{}
	if cache != nil {
		opts.CachedData = &v8.CompilerCachedData{Bytes: cache.Bytes}
	}
	script, err := r.iso.CompileUnboundScript(e.bundle.Source, "node:internal/bootstrap", opts)
	if err != nil {
		return fmt.Errorf("compile bootstrap: %w", err)
	}
	r.bootScript = script
	val, err := script.Run(r.v8c)
	if err != nil {
		return fmt.Errorf("run bootstrap: %w", err)
	}
	val.Release()
	if opts.CachedData != nil && opts.CachedData.Rejected && cache == e.bootFromDisk {
		e.disk.rejected.Add(1)
	}
	if cache == nil || (opts.CachedData != nil && opts.CachedData.Rejected) {
		// The cache is made after the bootstrap ran, so it holds the
		// functions bootstrapping compiled.
		cd := script.CreateCodeCache()
		if cd != nil && !cd.Rejected && len(cd.Bytes) > 0 {
			e.mu.Lock()
			e.bootCache, e.bootBase = cd, len(cd.Bytes)
			e.saveBootCache()
			e.mu.Unlock()
		}
	}
	g := r.v8c.Global()
	defer g.Release()
	take := func(name string) (*v8.Function, error) {
		v, err := g.Get(name)
		if err != nil {
			return nil, err
		}
		fn, err := v.AsFunction()
		if err != nil {
			return nil, fmt.Errorf("bootstrap did not define %s", name)
		}
		g.Delete(name)
		return fn, nil
	}
	if r.start, err = take("__secexec_start"); err != nil {
		return err
	}
	if r.dispatch, err = take("__secexec_dispatch"); err != nil {
		return err
	}
	if r.beforeEx, err = take("__secexec_beforeExit"); err != nil {
		return err
	}
	if r.exitFn, err = take("__secexec_exit"); err != nil {
		return err
	}
	if r.rejectRun, err = take("__secexec_rejections"); err != nil {
		return err
	}
	if r.ctxSettle, err = take("__secexec_ctxSettle"); err != nil {
		return err
	}
	r.rejectIso = armRejections(r.rejectRun.Value, e.maxRejections)
	dyn, err := take("__secexec_dynamicImport")
	if err != nil {
		return err
	}
	armDynamicImport(dyn)
	dyn.Release()
	if r.scratch == nil {
		return errors.New("bootstrap did not set the scratch buffer")
	}
	return nil
}

// watch terminates the isolate when the process is killed or when the
// time limit passes; TerminateExecution is the one isolate call V8 allows
// from any thread. (Heap statistics are not safe to read concurrently:
// V8 walks its pages to compute them, so the external-memory checks run
// on the isolate's own thread, see checkExternal.) It returns a function
// that stops watching.
func (r *rt) watch() func() {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var deadline <-chan time.Time
		if tl := r.e.cfg.TimeLimit; tl > 0 {
			t := time.NewTimer(tl)
			defer t.Stop()
			deadline = t.C
		}
		why := termNone
		select {
		case <-done:
			return
		case <-r.ctx.Done():
			why = termKilled
		case <-deadline:
			why = termTimeout
		}
		r.terminated.CompareAndSwap(termNone, why)
		// A termination requested while no JavaScript runs (the process is
		// between two calls into V8) can be lost when V8 enters again, so
		// it is repeated until the runtime is done.
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			r.iso.TerminateExecution()
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// checkExternal terminates the isolate when memory outside the heap
// (ArrayBuffer contents) passes its limit. It runs on the isolate's
// thread: at bridge calls (at most every extCheckEvery) and between loop
// events; JavaScript calls it too before large allocations.
//
// Allocations that JavaScript announces (extra > 0) fail at the limit;
// the watchdog (extra == 0) terminates only past an eighth more, so that
// a guest that filled its budget can still report the RangeError it got.
//
// The watchdog also reports the isolate's memory (heap and external) to
// the kernel, which bounds the VM's processes together
// (Limits.VMMemoryBytes) and kills the VM's largest process past it. What
// is reported is capped at the process's own limits: past those this
// watchdog or the heap limit ends the process itself, with its own
// result.
func (r *rt) checkExternal(extra uint64) bool {
	hs := r.iso.GetHeapStatistics()
	limit := r.extLimit
	if extra == 0 {
		limit += limit / 8
		if r.p != nil {
			used := min(hs.TotalHeapSize, r.heapLimit) + min(hs.ExternalMemory, limit)
			r.p.ReportMemory(r.threadsMemory(used))
		}
		return hs.ExternalMemory <= limit
	}
	if hs.ExternalMemory+extra > limit {
		return false
	}
	// An announced allocation also fails where it would take the VM's
	// processes together past their limit: the guest gets the RangeError
	// before the memory exists, rather than the VM's largest process being
	// killed after it does.
	if r.p != nil {
		used := min(hs.TotalHeapSize, r.heapLimit) + hs.ExternalMemory + extra
		return r.p.TryMemory(r.threadsMemory(used))
	}
	return true
}

// threadsMemory records used as this thread's memory and returns what
// the process's threads hold together: a worker's isolate counts against
// the VM's memory limit as its parent's does.
func (r *rt) threadsMemory(used uint64) int64 {
	u := int64(min(used, 1<<62))
	if r.worker != nil {
		r.worker.mem.Store(u)
	} else {
		r.memUsed.Store(u)
	}
	if r.tg == nil {
		return u
	}
	return u + r.tg.memory(r)
}

const extCheckEvery = 2 * time.Millisecond

// hostBudget returns how many bytes the host may still allocate for this
// process's guest (results it hands to JavaScript: decompressed data, a
// child's output): the external-memory limit less what the process holds
// already there and in blobs. Bridges bound their buffers by it before
// allocating them, so no host buffer made for a guest outgrows the
// guest's own memory limit.
func (r *rt) hostBudget() int {
	hs := r.iso.GetHeapStatistics()
	used := hs.ExternalMemory + uint64(max(r.blobBytes, 0))
	if used >= r.extLimit {
		return 0
	}
	return int(min(r.extLimit-used, maxBlobBytes))
}

func (r *rt) terminate(why int32) {
	if r.terminated.CompareAndSwap(termNone, why) {
		r.iso.TerminateExecution()
	}
}

// outOfMemory reports whether the isolate ended for want of memory.
func (r *rt) outOfMemory() bool {
	why := r.terminated.Load()
	return why == termHeap || why == termExternal || r.heapExhausted()
}

// heapExhausted reports whether v8go's near-heap-limit callback fired: it
// terminates the isolate and raises the limit to let it unwind.
func (r *rt) heapExhausted() bool {
	hs := r.iso.GetHeapStatistics()
	return hs.HeapSizeLimit > r.heapLimit+r.heapLimit/2
}

// run starts the user's code and runs the event loop to the end.
func (r *rt) run(inv *nodecli.Invocation) int {
	p := r.p
	// Node ignores SIGPIPE: a write to a closed pipe fails with EPIPE
	// instead of killing the process.
	_, _ = p.SetDisposition(kernel.SIGPIPE, kernel.DispositionIgnore)
	env := map[string]string{}
	for _, kv := range p.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if k != "" {
			env[k] = v
		}
	}
	if r.workerEnv != nil {
		env = r.workerEnv
	}
	argv := []string{NodePath}
	switch inv.Mode {
	case nodecli.ModeFile:
		file := inv.File
		if !strings.HasPrefix(file, "/") {
			file = joinPath(p.Cwd(), file)
		}
		argv = append(argv, file)
	case nodecli.ModeStdin:
		if inv.Dash {
			argv = append(argv, "-") // node keeps it: process.argv[1] is "-"
		}
	case nodecli.ModeEval:
		if r.workerInfo != nil {
			argv = append(argv, "[worker eval]")
		}
	}
	argv = append(argv, inv.Args...)
	clk := p.Kernel().Clock()
	info := startInfo{
		Argv: argv, Argv0: firstOr(p.Argv(), "node"), ExecArgv: nonNil(inv.ExecArgv), Env: env,
		Pid: p.PID(), Ppid: p.PPID(), UID: p.UID(), GID: p.GID(),
		Mode: inv.Mode, Code: inv.Code, File: inv.File, InputType: inv.InputType, Preload: inv.Require,
		Clock: clk.Policy().String(), WallBaseMs: float64(clk.Boot().Add(-clk.Resolution()).UnixMilli()),
		NowMs: float64(clk.Now().UnixMicro()) / 1e3, NoWarnings: inv.NoWarnings,
		// node with no script on a terminal is the interactive REPL.
		REPL:   inv.Mode == nodecli.ModeStdin && !inv.Dash && (p.IsTerminal(0) || inv.Interactive),
		Worker: r.workerInfo,
	}
	if r.terminated.Load() != termNone {
		return r.finish(nil)
	}
	js, _ := json.Marshal(info)
	arg, err := v8.NewValue(r.iso, string(js))
	if err != nil {
		return r.finish(err)
	}
	v, err := r.start.Call(v8.Undefined(r.iso), arg)
	arg.Release()
	if v != nil {
		v.Release()
	}
	if err == nil {
		err = r.settleRejections()
	}
	if err != nil || r.exited || r.terminated.Load() != termNone {
		return r.finish(err)
	}
	return r.loop()
}

// finish turns how the process ended into its exit status.
func (r *rt) finish(err error) int {
	if r.exited {
		return r.exitCode
	}
	if pendingRejections(r.rejectIso) == rejectionsOverflow {
		r.terminated.CompareAndSwap(termNone, termHeap)
	}
	if r.worker != nil && r.outOfMemory() {
		// A worker out of memory ends alone; its parent gets
		// ERR_WORKER_OUT_OF_MEMORY (worker.go), nothing is printed.
		r.worker.oom.Store(true)
		return 1
	}
	switch r.terminated.Load() {
	case termKilled:
		return 137
	case termTimeout:
		writeString(context.WithoutCancel(r.ctx), r.p, 2, "CPU time limit exceeded\n")
		return 124
	case termHeap:
		writeString(r.ctx, r.p, 2, "\nFATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\n")
		return 134
	case termExternal:
		writeString(r.ctx, r.p, 2, "\nFATAL ERROR: external memory limit reached (ArrayBuffers and Buffers) - JavaScript heap out of memory\n")
		return 134
	}
	if r.heapExhausted() {
		writeString(r.ctx, r.p, 2, "\nFATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\n")
		return 134
	}
	if err != nil {
		// An exception escaped the runtime's own handlers: report it as
		// an uncaught error.
		var jerr *v8.JSError
		msg := err.Error()
		if errors.As(err, &jerr) && jerr.StackTrace != "" {
			msg = jerr.StackTrace
		}
		writeString(r.ctx, r.p, 2, msg+"\n\nNode.js v"+NodeVersion+"\n")
		return 1
	}
	return 0
}

// call invokes a JavaScript entry point of the runtime. It reports false
// when the process is over (exited or terminated).
func (r *rt) call(fn *v8.Function, args ...v8.Valuer) (bool, error) {
	if r.ctxs != nil {
		r.ctxs.enter()
	}
	v, err := fn.Call(v8.Undefined(r.iso), args...)
	if r.ctxs != nil {
		r.ctxs.leave()
		if r.ctxs.afterCall(err) {
			if v != nil {
				v.Release()
			}
			return true, nil
		}
	}
	if v != nil {
		v.Release()
	}
	if err == nil {
		err = r.settleRejections()
	}
	if r.exited || r.terminated.Load() != termNone {
		return false, err
	}
	if err != nil {
		return false, err
	}
	return true, nil
}

// settleRejections runs the runtime's handling of unhandled promise
// rejections (the 'unhandledRejection' event, else an uncaught error)
// while V8 reports new rejection events. It ends when a pass brings no
// new event, or the process is over. A guest that leaves more rejections
// pending than the hook records is out of memory.
func (r *rt) settleRejections() error {
	for {
		switch pendingRejections(r.rejectIso) {
		case rejectionsNone:
			return nil
		case rejectionsOverflow:
			r.terminate(termHeap)
			return nil
		}
		if r.exited || r.terminated.Load() != termNone {
			return nil
		}
		v, err := r.rejectRun.Call(v8.Undefined(r.iso))
		if v != nil {
			v.Release()
		}
		if err != nil {
			return err
		}
	}
}

// dispatchEvent calls the JavaScript handler of one loop event.
func (r *rt) dispatchEvent(kind string, a, b, c int, code string) (bool, error) {
	args := []v8.Valuer{r.str(kind), r.num(a), r.num(b), r.num(c)}
	if code != "" {
		args[3] = r.str(code)
	}
	ok, err := r.call(r.dispatch, args...)
	for _, v := range args[1:] {
		if val, isVal := v.(*v8.Value); isVal && !r.isInterned(val) {
			val.Release()
		}
	}
	return ok, err
}

// loop is the event loop: it runs until nothing keeps the process alive,
// then emits 'beforeExit' (which may schedule more work) and 'exit'.
func (r *rt) loop() int {
	for {
		paused := r.ctxs != nil && r.ctxs.paused()
		if !paused {
			if ok, err := r.runDueTimers(); !ok {
				return r.finish(err)
			}
		}
		if !r.alive() {
			if ok, err := r.call(r.beforeEx); !ok {
				return r.finish(err)
			}
			if !r.alive() {
				break
			}
			continue
		}
		var wake <-chan time.Time
		var tm *time.Timer
		if d, ok := r.nextTimer(); ok && !paused {
			tm = time.NewTimer(d)
			wake = tm.C
		}
		select {
		case ev := <-r.events:
			if tm != nil {
				tm.Stop()
			}
			if paused && r.ctxs.hold(ev) {
				break
			}
			if ok, err := r.handle(ev); !ok {
				return r.finish(err)
			}
		case <-wake:
		case <-r.wake:
			if ok, err := r.deliverPorts(); !ok {
				return r.finish(err)
			}
		case <-r.ctx.Done():
			if tm != nil {
				tm.Stop()
			}
			r.terminate(termKilled)
			return r.finish(nil)
		}
		if r.terminated.Load() != termNone {
			return r.finish(nil)
		}
		if !r.checkExternal(0) {
			r.terminate(termExternal)
			return r.finish(nil)
		}
	}
	if ok, err := r.call(r.exitFn); !ok {
		return r.finish(err)
	}
	return r.finish(nil)
}

// alive reports whether anything keeps the loop running, as libuv's
// referenced handles and requests do.
func (r *rt) alive() bool {
	if r.ctxs != nil {
		// A context serves until it is closed (its process killed).
		return true
	}
	if r.refTimer > 0 || r.writes > 0 || r.pending > 0 {
		return true
	}
	if r.tg != nil && r.tg.keepsAlive(r) {
		return true
	}
	for _, a := range r.acceptors {
		if a.ref {
			return true
		}
	}
	for _, rd := range r.readers {
		if rd.ref {
			return true
		}
	}
	for _, c := range r.children {
		if c.ref {
			return true
		}
	}
	// An HTTP/2 session keeps the process alive until it is closed, as
	// node's session socket does; so do its streams while they run.
	if r.h2Alive() {
		return true
	}
	// A signal handler alone does not keep Node alive either, but a
	// caught signal already sent is delivered before the process ends, as
	// libuv reads its signal pipe before it finds the loop idle: a child
	// that signals its parent and then exits must not race its own
	// signal (the REPL lost a ^C so, and exited 0).
	if r.sigInFlight.Load() > 0 {
		return true
	}
	return r.p.PendingCaught() != 0
}

func (r *rt) handle(ev event) (bool, error) {
	switch ev.kind {
	case "data":
		rd := r.readers[ev.a]
		n := 0
		if rd != nil && len(ev.data) > 0 {
			n = copy(r.scratch, ev.data)
		}
		if rd == nil {
			if ev.ack != nil {
				close(ev.ack)
			}
			return true, nil
		}
		if ev.code != "" || len(ev.data) == 0 || rd.once {
			delete(r.readers, ev.a)
			rd.stop()
		}
		ok, err := r.dispatchEvent("data", ev.a, n, 0, ev.code)
		if ev.ack != nil {
			close(ev.ack)
		}
		return ok, err
	case "exit":
		c := r.children[ev.a]
		delete(r.children, ev.a)
		if c == nil {
			return true, nil
		}
		return r.dispatchEvent("exit", ev.a, ev.b, ev.c, "")
	case "write":
		r.writes--
		return r.dispatchEvent("write", ev.a, 0, 0, ev.code)
	case "signal":
		r.sigInFlight.Add(-1)
		return r.dispatchEvent("signal", ev.a, 0, 0, "")
	case "tlssni":
		return r.dispatchPayload("tlssni", ev.a, 0, "", ev.payload)
	case "ctxeval", "ctxexpire":
		if r.ctxs == nil {
			return true, nil
		}
		return r.ctxs.handle(ev)
	}
	return r.handleNet(ev)
}

// dispose releases everything the runtime holds. The isolate is never
// reused: each process gets a fresh one.
func (r *rt) dispose() {
	for _, rd := range r.readers {
		rd.stop()
	}
	for _, c := range r.children {
		c.stop()
	}
	for _, a := range r.acceptors {
		a.cancel()
	}
	r.disposeH2()
	r.disposeH2Server()
	r.stopSignals()
	if r.iso == nil {
		return
	}
	if why := r.terminated.Load(); (why == termNone || why == termExit) && r.p != nil && !r.heapExhausted() {
		r.flushCodeCaches()
		r.upgradeBootCache()
	}
	if h := r.e.testHook; h != nil {
		h(r)
	}
	if r.scratchRelease != nil {
		r.scratchRelease()
		r.scratchRelease = nil
	}
	for _, v := range r.release {
		v.Release()
	}
	r.release = nil
	if r.ctxSettle != nil {
		r.ctxSettle.Release()
		r.ctxSettle = nil
	}
	disarmDynamicImport(r.rejectIso)
	disarmRejections(r.rejectIso)
	disarmPromiseHooks(r.rejectIso)
	r.rejectIso = nil
	if r.v8c != nil {
		r.v8c.Close()
	}
	r.iso.Dispose()
	r.e.live.Add(-1)
	r.iso = nil
}

// maxBootCacheUpgrades bounds how often the bootstrap's code cache is
// remade from a finished process.
const maxBootCacheUpgrades = 8

// maxBootCacheGrowth bounds an upgraded bootstrap cache relative to the
// one made right after bootstrapping (in percent). Every isolate
// deserializes the whole cache as it boots: a process that used the
// network stack (fetch compiles most of net, tls and http) would
// otherwise make every later start pay for code few of them run. Measured
// with `secexec bench`: after a fetch, sustained `node -e ”` fell from
// about 87 to 40 execs/s without the bound.
const maxBootCacheGrowth = 150

// upgradeBootCache remakes the bootstrap's code cache from a process that
// ran: the cache then also holds the functions of start-up and of the
// builtins the process used, which later isolates would otherwise compile
// again each time. A new cache replaces the old one only if it is larger,
// and within maxBootCacheGrowth of the first.
func (r *rt) upgradeBootCache() {
	e := r.e
	e.mu.Lock()
	n := e.bootUpgrades
	e.mu.Unlock()
	if n >= maxBootCacheUpgrades || r.bootScript == nil {
		return
	}
	cd := r.bootScript.CreateCodeCache()
	if cd == nil || cd.Rejected || len(cd.Bytes) == 0 {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(cd.Bytes) > e.bootBase*maxBootCacheGrowth/100 {
		return
	}
	if e.bootCache == nil || len(cd.Bytes) > len(e.bootCache.Bytes) {
		e.bootCache = cd
		e.bootUpgrades++
		e.saveBootCache()
	}
}

// --- timers ---

type timer struct {
	id    int
	when  time.Time
	ref   bool
	seq   uint64
	index int
}

type timerHeap []*timer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if h[i].when.Equal(h[j].when) {
		return h[i].seq < h[j].seq
	}
	return h[i].when.Before(h[j].when)
}
func (h timerHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i]; h[i].index = i; h[j].index = j }
func (h *timerHeap) Push(x any)   { t := x.(*timer); t.index = len(*h); *h = append(*h, t) }
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	*h = old[:len(old)-1]
	t.index = -1
	return t
}

var timerSeq atomic.Uint64

// maxTimers bounds the timers one process may have pending.
const maxTimers = 1 << 20

func (r *rt) timerStart(id int, ms float64, ref bool) error {
	if t, ok := r.timerMap[id]; ok {
		r.timerStopT(t)
	}
	if len(r.timerMap) >= maxTimers {
		return errTooMany
	}
	d := time.Duration(ms * float64(time.Millisecond))
	t := &timer{id: id, when: time.Now().Add(d), ref: ref, seq: timerSeq.Add(1)}
	r.timerMap[id] = t
	heap.Push(&r.timers, t)
	if ref {
		r.refTimer++
	}
	return nil
}

func (r *rt) timerStopT(t *timer) {
	delete(r.timerMap, t.id)
	if t.index >= 0 {
		heap.Remove(&r.timers, t.index)
	}
	if t.ref {
		r.refTimer--
	}
}

func (r *rt) timerRef(id int, ref bool) {
	t, ok := r.timerMap[id]
	if !ok || t.ref == ref {
		return
	}
	t.ref = ref
	if ref {
		r.refTimer++
	} else {
		r.refTimer--
	}
}

func (r *rt) nextTimer() (time.Duration, bool) {
	if len(r.timers) == 0 {
		return 0, false
	}
	d := time.Until(r.timers[0].when)
	if d < 0 {
		d = 0
	}
	return d, true
}

// runDueTimers fires the timers that are due, in order. Timers that
// become due while they run wait for the next turn, so a zero-delay
// timer that re-arms itself cannot starve the loop.
func (r *rt) runDueTimers() (bool, error) {
	now := time.Now()
	var due []*timer
	for len(r.timers) > 0 && !r.timers[0].when.After(now) {
		t := heap.Pop(&r.timers).(*timer)
		due = append(due, t)
	}
	for i, t := range due {
		if r.timerMap[t.id] != t {
			continue
		}
		if r.ctxs != nil && r.ctxs.paused() {
			// A context's request was answered (its deadline passed)
			// by an earlier timer: the rest wait for the next one.
			for _, t := range due[i:] {
				if r.timerMap[t.id] == t {
					heap.Push(&r.timers, t)
				}
			}
			return true, nil
		}
		delete(r.timerMap, t.id)
		if t.ref {
			r.refTimer--
		}
		if ok, err := r.dispatchEvent("timer", t.id, 0, 0, ""); !ok {
			return false, err
		}
	}
	return true, nil
}

func joinPath(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

func firstOr(s []string, def string) string {
	if len(s) == 0 || s[0] == "" {
		return def
	}
	return s[0]
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
