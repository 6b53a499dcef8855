package js

import (
	"context"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	v8 "github.com/tommie/v8go"

	"github.com/secexec/secexec/internal/js/nodecli"
	"github.com/secexec/secexec/kernel"
)

// worker_threads: each Worker is a fresh isolate with the full bootstrap,
// run on its own goroutine locked to its own OS thread, serving the same
// kernel process (pid, fds, cwd) as the thread that made it. Threads of
// one process form a threadGroup; they talk only through message ports
// whose queues live here, in Go: a message is the bytes of V8's
// serialization format (written and read by bootjs's v8_serdes), so no
// value is ever shared between isolates.

// Bounds on what the guest may make. Creating more is refused with
// ERR_WORKER_INIT_FAILED; posting past the queue bounds throws
// ERR_WORKER_MESSAGE_QUEUE_FULL instead of growing host memory.
const (
	// maxWorkersPerProcess bounds the live workers of one node process
	// (nested workers included).
	maxWorkersPerProcess = 64
	// maxWorkersPerVM bounds the live workers of all node processes of
	// one VM together.
	maxWorkersPerVM = 64
	// maxPortsPerGroup bounds the message ports (both ends of each
	// channel, broadcast channels included) of one process.
	maxPortsPerGroup = 1 << 14
	// maxMessageBytes bounds one serialized message.
	maxMessageBytes = 64 << 20
	// maxQueuedBytes bounds the bytes of messages posted but not yet
	// received by all the ports of one process together; each message
	// counts msgOverhead more.
	maxQueuedBytes = 128 << 20
	msgOverhead    = 256
	// minWorkerMemory is what a new worker must find room for under the
	// VM's memory limit: a bootstrapped isolate holds about 3.4 MiB.
	minWorkerMemory = 4 << 20
	// maxDeliveries bounds the messages one loop turn delivers, so that
	// timers and I/O still run while a peer floods a port.
	maxDeliveries = 1000
)

// Kinds of port messages, as JavaScript receives them.
const (
	msgData  = 0 // a serialized value
	msgClose = 1 // the other end closed
	msgExit  = 2 // the worker ended (control ports only): code
	msgStdio = 4 // bytes a worker wrote to its stdout or stderr (control ports only)
)

type portMsg struct {
	kind int
	code int
	// reason qualifies an exit: "oom" for a worker out of memory.
	reason string
	data   []byte
	ports  []*msgPort // ports transferred with the message
}

func (m *portMsg) cost() int64 { return int64(len(m.data)) + msgOverhead }

// msgPort is one end of a MessageChannel (or a BroadcastChannel member).
// Its owner is the runtime whose JavaScript holds it; nil while it is in
// transit inside a message. Fields are guarded by the group's mutex.
type msgPort struct {
	id      int
	peer    *msgPort
	owner   *rt
	queue   []portMsg
	started bool
	ref     bool
	closed  bool
	// bname is the channel name of a BroadcastChannel member.
	bname string
}

// threadGroup is the threads (main and workers) of one node process.
type threadGroup struct {
	e    *Engine
	k    *kernel.Kernel
	p    *kernel.Process
	main *rt

	mu         sync.Mutex
	ports      map[int]*msgPort
	nextPort   int
	queued     int64
	workers    map[int]*workerThread
	nextThread int
	// clocks are the CPU clocks of the live threads, by thread id (the
	// main thread is 0); ended holds what ended workers used.
	clocks  map[int]kernel.CPUClock
	ended   time.Duration
	closing bool
	wg      sync.WaitGroup
}

// workerThread is one running worker, seen from its group.
type workerThread struct {
	id     int
	cancel context.CancelFunc
	// terminated is set by worker.terminate(): the exit code is then 1.
	terminated atomic.Bool
	// oom is set when the worker ran out of memory.
	oom atomic.Bool
	mem atomic.Int64
}

// vmWorkers counts the live workers of each VM (kernel) an engine runs.
type vmWorkers struct {
	mu sync.Mutex
	n  map[*kernel.Kernel]int
}

func (v *vmWorkers) add(k *kernel.Kernel, d int) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.n == nil {
		v.n = map[*kernel.Kernel]int{}
	}
	if d > 0 && v.n[k]+d > maxWorkersPerVM {
		return false
	}
	v.n[k] += d
	if v.n[k] <= 0 {
		delete(v.n, k)
	}
	return true
}

// group returns the runtime's thread group, making it (for the main
// thread) at first use. The process's CPU clock then counts the threads
// of all its workers too.
func (r *rt) group() *threadGroup {
	if r.tg != nil {
		return r.tg
	}
	g := &threadGroup{e: r.e, p: r.p, main: r, ports: map[int]*msgPort{}, workers: map[int]*workerThread{}, clocks: map[int]kernel.CPUClock{}}
	if r.p != nil {
		g.k = r.p.Kernel()
	}
	if r.cpuClock != nil {
		g.clocks[0] = r.cpuClock
		if r.p != nil {
			r.p.SetCPUClock(g.cpuTime)
		}
	}
	r.tg = g
	return g
}

// cpuTime sums the CPU time of the group's threads, ended ones included
// (their clocks are frozen when they end).
func (g *threadGroup) cpuTime() (time.Duration, bool) {
	g.mu.Lock()
	clocks := make([]kernel.CPUClock, 0, len(g.clocks))
	for _, c := range g.clocks {
		clocks = append(clocks, c)
	}
	sum := g.ended
	g.mu.Unlock()
	for _, c := range clocks {
		d, ok := c()
		if !ok {
			return 0, false
		}
		sum += d
	}
	return sum, true
}

// memory returns what the group's workers other than self hold.
func (g *threadGroup) memory(self *rt) int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	var n int64
	for _, w := range g.workers {
		if self == nil || self.worker != w {
			n += w.mem.Load()
		}
	}
	if self != nil && self.worker != nil {
		n += g.main.memUsed.Load()
	}
	return n
}

// newPort makes a port owned by owner. Called with g.mu held.
func (g *threadGroup) newPort(owner *rt) (*msgPort, error) {
	if len(g.ports) >= maxPortsPerGroup {
		return nil, errTooMany
	}
	g.nextPort++
	p := &msgPort{id: g.nextPort, owner: owner}
	g.ports[p.id] = p
	return p, nil
}

// newChannel makes two entangled ports owned by a and b (nil: in transit).
func (g *threadGroup) newChannel(a, b *rt) (*msgPort, *msgPort, error) {
	p1, err := g.newPort(a)
	if err != nil {
		return nil, nil, err
	}
	p2, err := g.newPort(b)
	if err != nil {
		delete(g.ports, p1.id)
		return nil, nil, err
	}
	p1.peer, p2.peer = p2, p1
	return p1, p2, nil
}

// owned returns port id if r owns it. Called with g.mu held.
func (g *threadGroup) owned(r *rt, id int) *msgPort {
	p := g.ports[id]
	if p == nil || p.owner != r {
		return nil
	}
	return p
}

// enqueue appends m to p's queue and wakes its owner. Called with g.mu
// held; a closed port drops the message (and closes the ports it
// carried).
func (g *threadGroup) enqueue(p *msgPort, m portMsg) {
	if p.closed {
		g.drop(m)
		return
	}
	g.queued += m.cost()
	p.queue = append(p.queue, m)
	if p.owner != nil {
		p.owner.notify()
	}
}

// drop discards a message that will never be received: the ports it
// carried are closed.
func (g *threadGroup) drop(m portMsg) {
	for _, tp := range m.ports {
		g.closePort(tp)
	}
}

// closePort closes p and tells its peer. Called with g.mu held.
func (g *threadGroup) closePort(p *msgPort) {
	if p.closed {
		return
	}
	p.closed = true
	for _, m := range p.queue {
		g.queued -= m.cost()
		g.drop(m)
	}
	p.queue = nil
	delete(g.ports, p.id)
	if q := p.peer; q != nil {
		p.peer, q.peer = nil, nil
		if !q.closed {
			g.queued += msgOverhead
			q.queue = append(q.queue, portMsg{kind: msgClose})
			if q.owner != nil {
				q.owner.notify()
			}
		}
	}
}

// portBatch is a port with messages to receive and how many of them.
type portBatch struct {
	p *msgPort
	n int
}

// pending lists what r's ports have to receive now, as Node's ports
// drain: each started port's messages in port order (a port's queue
// whole before the next port's), then the closes of ports whose other
// end closed, after everything else.
func (g *threadGroup) pending(r *rt) []portBatch {
	g.mu.Lock()
	defer g.mu.Unlock()
	var data, closes []portBatch
	for _, p := range g.ports {
		if p.owner != r || len(p.queue) == 0 {
			continue
		}
		n := len(p.queue)
		if p.queue[n-1].kind == msgClose {
			n--
		}
		if n > 0 && p.started {
			data = append(data, portBatch{p, n})
		} else if n == 0 {
			closes = append(closes, portBatch{p, 1})
		}
	}
	sort.Slice(data, func(i, j int) bool { return data[i].p.id < data[j].p.id })
	sort.Slice(closes, func(i, j int) bool { return closes[i].p.id < closes[j].p.id })
	return append(data, closes...)
}

// popFrom takes the next message of p while r still owns it and may
// receive it. The ports the message carries become r's.
func (g *threadGroup) popFrom(r *rt, p *msgPort) (portMsg, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if p.owner != r || p.closed || len(p.queue) == 0 || (!p.started && p.queue[0].kind != msgClose) {
		return portMsg{}, false
	}
	m := p.queue[0]
	p.queue[0] = portMsg{}
	p.queue = p.queue[1:]
	g.queued -= m.cost()
	g.adopt(r, m.ports)
	if m.kind == msgClose {
		delete(g.ports, p.id)
		p.closed = true
	}
	return m, true
}

// popPort is pop for one port (receiveMessageOnPort): data messages only.
func (g *threadGroup) popPort(r *rt, id int) (portMsg, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	p := g.owned(r, id)
	if p == nil || len(p.queue) == 0 || p.queue[0].kind != msgData {
		return portMsg{}, false
	}
	m := p.queue[0]
	p.queue[0] = portMsg{}
	p.queue = p.queue[1:]
	g.queued -= m.cost()
	g.adopt(r, m.ports)
	return m, true
}

// adopt makes r the owner of ports that arrived in a message.
func (g *threadGroup) adopt(r *rt, ports []*msgPort) {
	for _, tp := range ports {
		if tp.closed {
			continue
		}
		tp.owner = r
		if len(tp.queue) > 0 {
			r.notify()
		}
	}
}

// keepsAlive reports whether a port of r holds its loop open: a ref'd
// open port, as a MessagePort with a 'message' listener does in Node.
func (g *threadGroup) keepsAlive(r *rt) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, p := range g.ports {
		if p.owner == r && !p.closed && (p.ref || (len(p.queue) > 0 && p.queue[0].kind == msgClose)) {
			// A close waiting to be received is delivered before the
			// thread ends, as libuv runs close callbacks.
			return true
		}
	}
	return false
}

// release closes every port r owns: its thread is over.
func (g *threadGroup) release(r *rt) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, p := range g.ports {
		if p.owner == r {
			g.closePort(p)
		}
	}
}

// shutdown ends every worker of the group and waits for their threads:
// no worker outlives its process.
func (g *threadGroup) shutdown() {
	g.mu.Lock()
	g.closing = true
	for _, w := range g.workers {
		w.cancel()
	}
	g.mu.Unlock()
	g.wg.Wait()
}

// notify wakes r's loop to deliver port messages.
func (r *rt) notify() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// deliverPorts hands queued port messages to JavaScript, one macrotask
// each (the "port" event: port id, kind, byte count or exit code, and
// the ids of transferred ports), at most maxDeliveries per turn.
func (r *rt) deliverPorts() (bool, error) {
	if r.tg == nil {
		return true, nil
	}
	batch := r.tg.pending(r)
	delivered := 0
	for _, pb := range batch {
		for range pb.n {
			if delivered == maxDeliveries {
				r.notify()
				return true, nil
			}
			m, ok := r.tg.popFrom(r, pb.p)
			if !ok {
				break
			}
			delivered++
			if ok, err := r.deliverMsg(pb.p, m); !ok {
				return false, err
			}
		}
	}
	if len(batch) > 0 {
		// More may have come while these ran.
		r.notify()
	}
	return true, nil
}

// deliverMsg hands one message of port p to JavaScript.
func (r *rt) deliverMsg(p *msgPort, m portMsg) (bool, error) {
	n := m.code
	if m.kind == msgData || m.kind == msgStdio {
		v, err := r.bytesResult(m.data)
		if err != nil {
			// Too large for what the guest may still hold: the message
			// is lost, as one that fails to deserialize.
			return r.dispatchPort(p.id, 3, 0, "")
		}
		n = int(v.Number())
	}
	extra := portIDs(m.ports)
	switch m.kind {
	case msgExit:
		extra = m.reason
	case msgStdio:
		extra = strconv.Itoa(m.code)
	}
	return r.dispatchPort(p.id, m.kind, n, extra)
}

// dispatchPort calls the JavaScript handler of a "port" event.
func (r *rt) dispatchPort(id, kind, n int, extra string) (bool, error) {
	args := []v8.Valuer{r.str("port"), r.num(id), r.num(kind), r.num(n), r.undefinedOr(extra)}
	ok, err := r.call(r.dispatch, args...)
	for _, v := range args[1:] {
		if val, isVal := v.(*v8.Value); isVal && !r.isInterned(val) {
			val.Release()
		}
	}
	return ok, err
}

func (r *rt) undefinedOr(s string) *v8.Value {
	if s == "" {
		return v8.Undefined(r.iso)
	}
	v, err := v8.NewValue(r.iso, s)
	if err != nil {
		return v8.Undefined(r.iso)
	}
	return v
}

func portIDs(ps []*msgPort) string {
	if len(ps) == 0 {
		return ""
	}
	var b strings.Builder
	for i, p := range ps {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(p.id))
	}
	return b.String()
}

// workerSpec is what the parent's JavaScript asks a worker to run.
type workerSpec struct {
	Mode     string            `json:"mode"` // "file" or "eval"
	File     string            `json:"file"`
	Code     string            `json:"code"`
	Argv     []string          `json:"argv"`
	ExecArgv []string          `json:"execArgv"`
	Env      map[string]string `json:"env"`
	Name     string            `json:"name"`
	// HeapMB is resourceLimits.maxOldGenerationSizeMb (0: the parent's).
	HeapMB float64 `json:"heapMb"`
	// Ports are the ids of ports transferred in the init message.
	Ports []int `json:"ports"`
}

// workerInfo is what the worker's start() receives besides startInfo.
type workerInfo struct {
	ThreadID int     `json:"threadId"`
	Port     int     `json:"port"`
	Control  int     `json:"control"`
	Name     string  `json:"name"`
	HeapMB   float64 `json:"heapMb"`
	Init     int     `json:"init"` // bytes of the init message (workerInit)
	Ports    string  `json:"ports"`
}

// startWorker starts a worker of r's process. It returns the worker's
// thread id and the parent's ends of its message port and control port.
func (r *rt) startWorker(spec workerSpec, init []byte) (tid, port, control int, err error) {
	g := r.group()
	e := r.e
	if r.p == nil {
		return 0, 0, 0, guestError("ERR_WORKER_INIT_FAILED:no process")
	}
	if msg := invalidExecArgv(spec); msg != "" {
		return 0, 0, 0, guestError("ERR_WORKER_INVALID_EXEC_ARGV:" + msg)
	}
	if err := e.acquire(); err != nil {
		return 0, 0, 0, guestError("ERR_WORKER_INIT_FAILED:the engine is closed")
	}
	heap := r.heapLimit
	if spec.HeapMB > 0 {
		heap = min(max(uint64(spec.HeapMB*(1<<20)), minHeapLimit), r.heapLimit)
	}
	fail := func(msg string) (int, int, int, error) {
		e.running.Done()
		return 0, 0, 0, guestError("ERR_WORKER_INIT_FAILED:" + msg)
	}
	// The new isolate must fit under the VM's memory limit with what the
	// process's threads hold already.
	if !r.p.TryMemory(r.memUsed.Load() + g.memory(r) + r.worker.memOr0() + minWorkerMemory) {
		return fail("the VM's memory limit leaves no room for another worker")
	}
	g.mu.Lock()
	if g.closing {
		g.mu.Unlock()
		return fail("the process is exiting")
	}
	if len(g.workers) >= maxWorkersPerProcess {
		g.mu.Unlock()
		return fail("too many workers in this process (at most " + strconv.Itoa(maxWorkersPerProcess) + ")")
	}
	if !e.vmWorkers.add(g.k, 1) {
		g.mu.Unlock()
		return fail("too many workers in this VM (at most " + strconv.Itoa(maxWorkersPerVM) + ")")
	}
	// Ports carried by the init message must be in transit (detached by
	// the parent's JavaScript just before).
	var carried []*msgPort
	for _, id := range spec.Ports {
		p := g.owned(r, id)
		if p == nil || p.closed {
			g.mu.Unlock()
			e.vmWorkers.add(g.k, -1)
			return fail("a transferred port is not this thread's")
		}
		carried = append(carried, p)
	}
	for _, p := range carried {
		p.owner = nil
	}
	// The control channel is made first: its lower ids have its messages
	// ('online', errors, output) received before the public port's in a
	// turn, as Node's internal port comes before its public one.
	ctl1, ctl2, err1 := g.newChannel(r, nil)
	if err1 != nil {
		g.mu.Unlock()
		e.vmWorkers.add(g.k, -1)
		return fail("too many message ports")
	}
	pub1, pub2, err2 := g.newChannel(r, nil)
	if err2 != nil {
		g.closePort(ctl1)
		g.closePort(ctl2)
		g.mu.Unlock()
		e.vmWorkers.add(g.k, -1)
		return fail("too many message ports")
	}
	ctl1.ref = true
	g.nextThread++
	ctx, cancel := context.WithCancel(r.ctx)
	w := &workerThread{id: g.nextThread, cancel: cancel}
	g.workers[w.id] = w
	g.wg.Add(1)
	g.mu.Unlock()

	info := workerInfo{ThreadID: w.id, Port: pub2.id, Control: ctl2.id, Name: spec.Name, HeapMB: spec.HeapMB}
	go g.runWorker(ctx, w, spec, info, init, carried, pub2, ctl2, ctl1, heap)
	return w.id, pub1.id, ctl1.id, nil
}

// stdioToParent hands what a worker writes to its stdout or stderr to
// its parent, whose Worker.stdout/stderr streams read it (by default
// piped to the parent's own), as Node's worker stdio does. It reports
// false when it cannot (the parent is gone or its queue is full): the
// worker then writes to the descriptor itself.
func (r *rt) stdioToParent(fd int, b []byte) bool {
	if r.parentCtl == nil || (fd != 1 && fd != 2) || len(b) == 0 {
		return false
	}
	g := r.tg
	g.mu.Lock()
	defer g.mu.Unlock()
	m := portMsg{kind: msgStdio, code: fd, data: append([]byte(nil), b...)}
	if r.parentCtl.closed || g.queued+m.cost() > maxQueuedBytes {
		return false
	}
	g.enqueue(r.parentCtl, m)
	return true
}

// perProcessFlags are node options a worker may not have: they act on the
// whole process.
var perProcessFlags = map[string]bool{"--title": true, "--redirect-warnings": true}

// invalidExecArgv says what is wrong with a worker's execArgv or its
// NODE_OPTIONS, as Node's ERR_WORKER_INVALID_EXEC_ARGV does, or "".
func invalidExecArgv(spec workerSpec) string {
	check := func(flags []string) bool {
		for _, f := range flags {
			name, _, _ := strings.Cut(f, "=")
			if perProcessFlags[name] {
				return false
			}
		}
		_, err := nodecli.Parse(append(append([]string{"node"}, flags...), "-e", ""))
		return err == nil
	}
	if !check(spec.ExecArgv) {
		return "Initiated Worker with invalid execArgv flags: " + strings.Join(spec.ExecArgv, ", ")
	}
	if opts := strings.Fields(spec.Env["NODE_OPTIONS"]); len(opts) > 0 && !check(opts) {
		return "Initiated Worker with invalid NODE_OPTIONS env variable: " + strings.Join(opts, ", ")
	}
	return ""
}

func (w *workerThread) memOr0() int64 {
	if w == nil {
		return 0
	}
	return w.mem.Load()
}

// runWorker runs one worker to its end on a thread of its own, then
// tells the parent its exit code on the control port.
func (g *threadGroup) runWorker(ctx context.Context, w *workerThread, spec workerSpec, info workerInfo, init []byte,
	carried []*msgPort, pub, ctl, parentCtl *msgPort, heap uint64) {
	e := g.e
	defer e.running.Done()
	defer g.wg.Done()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	clock, stopClock := kernel.ThreadCPUClock()
	g.mu.Lock()
	g.clocks[w.id] = clock
	g.mu.Unlock()

	g.workerMain(ctx, w, spec, info, init, carried, pub, ctl, parentCtl, heap)
	stopClock()
	used, _ := clock()
	g.mu.Lock()
	delete(g.clocks, w.id)
	g.ended += used
	g.mu.Unlock()
	w.cancel()
}

// workerEnded tells the parent that worker w ended with code, after every
// message it posted (the exit message is queued on the control port
// before the worker's ports close), and closes the worker's ports.
func (g *threadGroup) workerEnded(w *workerThread, r *rt, code int, parentCtl *msgPort) {
	g.mu.Lock()
	reason := ""
	if w.oom.Load() {
		reason = "oom"
	} else if w.terminated.Load() {
		code = 1
	}
	delete(g.workers, w.id)
	w.mem.Store(0)
	g.enqueue(parentCtl, portMsg{kind: msgExit, code: code, reason: reason})
	g.mu.Unlock()
	g.e.vmWorkers.add(g.k, -1)
	if r != nil {
		g.release(r)
	}
}

// workerMain boots the worker's isolate and runs it; it returns the exit
// code.
func (g *threadGroup) workerMain(ctx context.Context, w *workerThread, spec workerSpec, info workerInfo, init []byte,
	carried []*msgPort, pub, ctl, parentCtl *msgPort, heap uint64) {
	e := g.e
	var r *rt
	if e.pool != nil {
		e.pool.begin()
		defer e.pool.end()
		r = e.pool.claim(poolKey{digest: e.bundle.Digest, heap: heap})
	}
	if r == nil {
		r = newRT(e)
		r.heapLimit, r.extLimit = heap, e.extLimitFor(heap)
		if err := r.boot(); err != nil {
			r.dispose()
			e.log.Error("js: worker bootstrap failed", "err", err)
			g.workerEnded(w, nil, 1, parentCtl)
			g.mu.Lock()
			g.closePort(pub)
			g.closePort(ctl)
			for _, p := range carried {
				g.closePort(p)
			}
			g.mu.Unlock()
			return
		}
	}
	r.p, r.ctx, r.startT = g.p, ctx, time.Now()
	r.tg, r.worker, r.parentCtl = g, w, parentCtl
	g.mu.Lock()
	pub.owner, ctl.owner = r, r
	g.adopt(r, carried)
	g.mu.Unlock()
	r.workerInit = init
	info.Ports = portIDs(carried)
	info.Init = len(init)
	r.workerInfo = &info

	stopWatch := r.watch()
	inv := &nodecli.Invocation{Mode: nodecli.ModeFile, File: spec.File, Args: spec.Argv, ExecArgv: spec.ExecArgv}
	if spec.Mode == "eval" {
		inv = &nodecli.Invocation{Mode: nodecli.ModeEval, Code: spec.Code, Args: spec.Argv, ExecArgv: spec.ExecArgv}
	}
	r.workerEnv = spec.Env
	code := r.run(inv)
	stopWatch()
	g.workerEnded(w, r, code, parentCtl)
	r.dispose()
}
