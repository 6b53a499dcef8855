package js

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	v8 "github.com/tommie/v8go"

	"github.com/secexec/secexec/internal/jsctx"
)

// A persistent context is a node process in "context server" mode: it
// boots like `node -e ''` (so require, module and the globals exist) and
// then, instead of exiting when its loop runs dry, evaluates the
// requests of its jsctx.Session one after the other as classic scripts
// in its one V8 context, so top-level declarations persist as in a REPL.
//
// Between requests a context does no work unless its session allows it
// (jsctx.Options.Background): the loop is paused while no request is in
// progress. Due timers do not fire and loop events other than the
// context server's own (I/O completions, data, child exits, signals) are
// held, in order; at the start of the next request, after its watcher
// is armed, the timers that came due and the held events run first, then
// the request's script, and the loop runs as usual while the request's
// promise is pending. So the embedder's deadline bounds that work too,
// and a context nobody evaluates in costs no CPU.
//
// Each request has a context: when it ends, a watcher terminates
// whatever JavaScript runs (the script, or a callback while the
// evaluation's promise is pending), the evaluation is answered
// jsctx.ErrTimeout, and the termination is cancelled so the context
// serves on. A heap or external-memory overrun, a kill or process.exit
// end the process instead: the session then reports a jsctx.DeadError.

// ctxServer is the context-server state of a runtime; it lives on the
// isolate's thread except for the fields under termMu and qmu.
type ctxServer struct {
	r *rt
	s *jsctx.Session

	settle *v8.Function // __secexec_ctxSettle from the bootstrap

	qmu   sync.Mutex
	queue []*jsctx.Request

	cur    *jsctx.Request
	curID  int
	nextID int
	stop   chan struct{} // ends the current request's watcher
	wg     sync.WaitGroup

	termMu  sync.Mutex
	running bool // a V8 call is in progress on the isolate's thread
	watchID int  // the request the watcher may terminate for
	expired bool // its context ended: terminate and cancel

	// cancelled is set when a termination was cancelled but the
	// request's answer is still due (it is answered at the next turn).
	fwdDone chan struct{}

	// held are the loop events that arrived while the loop was paused
	// (see paused), in arrival order.
	held []event
}

// paused reports whether the loop must do no guest work now: no request
// is in progress and the session does not allow background work.
func (c *ctxServer) paused() bool { return c.cur == nil && !c.s.Background() }

// hold keeps ev for the next request if it is guest work; the context
// server's own events are never held. It reports whether ev was held.
func (c *ctxServer) hold(ev event) bool {
	switch ev.kind {
	case "ctxeval", "ctxexpire":
		return false
	}
	c.held = append(c.held, ev)
	return true
}

// catchUp runs the work that became due while the loop was paused: the
// due timers, then the held events, as the loop would have. It stops
// early when the current request is answered meanwhile (its deadline
// passed); what is left stays held. It reports false when the process
// is over.
func (c *ctxServer) catchUp(req *jsctx.Request) (bool, error) {
	r := c.r
	if ok, err := r.runDueTimers(); !ok {
		return false, err
	}
	for len(c.held) > 0 && c.cur == req {
		ev := c.held[0]
		c.held[0] = event{}
		c.held = c.held[1:]
		if ok, err := r.handle(ev); !ok {
			return false, err
		}
	}
	if len(c.held) == 0 {
		c.held = nil
	}
	return true, nil
}

func newCtxServer(r *rt, s *jsctx.Session, settle *v8.Function) *ctxServer {
	c := &ctxServer{r: r, s: s, settle: settle, fwdDone: make(chan struct{})}
	go c.forward()
	return c
}

// forward moves requests from the session into the loop's queue.
func (c *ctxServer) forward() {
	defer close(c.fwdDone)
	for {
		select {
		case req := <-c.s.Requests():
			c.qmu.Lock()
			c.queue = append(c.queue, req)
			c.qmu.Unlock()
			if !c.r.post(c.r.ctx, event{kind: "ctxeval"}) {
				req.Answer(jsctx.Reply{Err: &jsctx.DeadError{Reason: "the context's process ended"}})
				return
			}
		case <-c.s.Closing():
			return
		case <-c.r.ctx.Done():
			return
		}
	}
}

func (c *ctxServer) pop() *jsctx.Request {
	c.qmu.Lock()
	defer c.qmu.Unlock()
	if len(c.queue) == 0 {
		return nil
	}
	req := c.queue[0]
	c.queue = c.queue[1:]
	return req
}

// handle runs the loop events of the context server.
func (c *ctxServer) handle(ev event) (bool, error) {
	switch ev.kind {
	case "ctxexpire":
		if c.cur != nil && ev.a == c.curID {
			c.finish(jsctx.Reply{Err: jsctx.TimeoutErr(c.cur.Ctx.Err())})
			c.cancelPending()
		}
	}
	return c.next()
}

// next starts queued requests until one is pending (its promise waits)
// or the queue is empty.
func (c *ctxServer) next() (bool, error) {
	for c.cur == nil {
		req := c.pop()
		if req == nil {
			return true, nil
		}
		if err := req.Ctx.Err(); err != nil {
			req.Answer(jsctx.Reply{Err: jsctx.TimeoutErr(err)})
			continue
		}
		if ok, err := c.start(req); !ok {
			return false, err
		}
	}
	return true, nil
}

// start evaluates req's script and hands its completion value to the
// bootstrap's settle function, which answers (now, or when the promise
// settles) through the ctxReply bridge call.
func (c *ctxServer) start(req *jsctx.Request) (bool, error) {
	r := c.r
	c.nextID++
	c.cur, c.curID = req, c.nextID
	c.watch(req, c.curID)

	if !c.s.Background() {
		if ok, err := c.catchUp(req); !ok {
			return false, err
		}
		if c.cur != req {
			return true, nil // its deadline passed during the catch-up
		}
	}
	v, err := c.run(req.Expr)
	if err != nil && c.isSyntaxError(err) && strings.Contains(req.Expr, "await") && !c.isOver(err) {
		// Top-level await: a classic script cannot hold it, an async
		// function can. A syntax error is found before anything runs, so
		// the forms are tried in turn (see awaitForms).
		for _, src := range awaitForms(req.Expr) {
			v, err = c.run(src)
			if err == nil || !c.isSyntaxError(err) || c.isOver(err) {
				break
			}
		}
	}
	if c.isOver(err) {
		if v != nil {
			v.Release()
		}
		return false, err
	}
	if c.absorb() {
		if v != nil {
			v.Release()
		}
		return true, nil
	}
	if err != nil {
		c.finish(jsctx.Reply{Err: &jsctx.ThrownError{Stack: jsErrorText(err)}})
		return true, nil
	}
	id := r.num(c.curID)
	ok, err := r.call(c.settle, id, v)
	id.Release()
	v.Release()
	return ok, err
}

// awaitForms are the async functions an evaluation using top-level
// await is tried as: an expression, whose value it keeps; statements
// whose last one (after the last ';') is an expression giving the value;
// plain statements (value undefined). Declarations inside stay local to
// the function.
func awaitForms(expr string) []string {
	forms := []string{"(async () => (" + expr + "\n))()"}
	body := strings.TrimRight(expr, " \t\r\n;")
	if i := strings.LastIndexByte(body, ';'); i >= 0 && strings.TrimSpace(body[i+1:]) != "" {
		forms = append(forms, "(async () => {"+body[:i+1]+"\nreturn ("+body[i+1:]+"\n)})()")
	}
	return append(forms, "(async () => {"+expr+"\n})()")
}

// run runs one script, marking the isolate busy for the watcher.
func (c *ctxServer) run(src string) (*v8.Value, error) {
	c.enter()
	defer c.leave()
	return c.r.v8c.RunScript(src, "[context]")
}

func (c *ctxServer) enter() {
	c.termMu.Lock()
	c.running = true
	c.termMu.Unlock()
}

func (c *ctxServer) leave() {
	c.termMu.Lock()
	c.running = false
	c.termMu.Unlock()
}

// isOver reports whether the process is ending: killed, out of memory,
// or exited. The heap is looked at only after a failed call (reading its
// statistics walks V8's pages; running out of heap fails the call).
func (c *ctxServer) isOver(err error) bool {
	r := c.r
	return r.exited || r.terminated.Load() != termNone || (err != nil && r.heapExhausted())
}

// expiredNow reports whether the current request's context has ended.
func (c *ctxServer) expiredNow() bool {
	c.termMu.Lock()
	defer c.termMu.Unlock()
	return c.expired && c.watchID == c.curID && c.cur != nil
}

func (c *ctxServer) isSyntaxError(err error) bool {
	var jerr *v8.JSError
	return errors.As(err, &jerr) && strings.HasPrefix(jerr.Message, "SyntaxError")
}

// absorb handles a V8 call that returned after the current request's
// context ended: the termination is cancelled and the request answered
// ErrTimeout. It reports whether that happened; the caller then treats
// the call as done (its error was the termination's).
func (c *ctxServer) absorb() bool {
	if !c.expiredNow() {
		return false
	}
	c.finish(jsctx.Reply{Err: jsctx.TimeoutErr(c.cur.Ctx.Err())})
	c.cancelPending()
	return true
}

// cancelPending clears a termination the watcher may have requested; if
// the isolate cannot be resumed the process ends, which ends the session.
func (c *ctxServer) cancelPending() {
	if !cancelTerminate(c.r.rejectIso) {
		c.r.terminate(termKilled)
	}
}

// watch starts the watcher of request id: when req's context ends it
// posts a ctxexpire event (for a pending promise) and terminates any
// JavaScript running until the request is finished.
func (c *ctxServer) watch(req *jsctx.Request, id int) {
	c.termMu.Lock()
	c.watchID, c.expired = id, false
	c.termMu.Unlock()
	stop := make(chan struct{})
	c.stop = stop
	done := req.Ctx.Done()
	if done == nil {
		return
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		select {
		case <-stop:
			return
		case <-done:
		}
		c.termMu.Lock()
		if c.watchID != id {
			c.termMu.Unlock()
			return
		}
		c.expired = true
		c.termMu.Unlock()
		go c.r.post(c.r.ctx, event{kind: "ctxexpire", a: id})
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			c.termMu.Lock()
			if c.watchID != id {
				c.termMu.Unlock()
				return
			}
			if c.running {
				c.r.iso.TerminateExecution()
			}
			c.termMu.Unlock()
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
}

// finish answers the current request and stops its watcher. The next
// request starts from the loop.
func (c *ctxServer) finish(rep jsctx.Reply) {
	if c.cur == nil {
		return
	}
	c.cur.Answer(rep)
	c.cur = nil
	c.termMu.Lock()
	c.watchID = 0
	c.termMu.Unlock()
	close(c.stop)
	c.stop = nil
	c.wg.Wait()
}

// Kinds of a ctxReply.
const (
	replyThrown   = 0 // text is the error's
	replyValue    = 1 // text is the value's JSON
	replyTooLarge = 2 // text is the JSON's length, over the bound
)

// reply is the ctxReply bridge call: the settle function's answer for
// request id.
func (c *ctxServer) reply(id, kind int, text string) {
	if c.cur == nil || id != c.curID {
		return
	}
	switch kind {
	case replyValue:
		c.finish(jsctx.Reply{Value: []byte(text)})
	case replyTooLarge:
		n, _ := strconv.ParseInt(text, 10, 64)
		c.finish(jsctx.Reply{Err: &jsctx.TooLargeError{Size: n, Limit: jsctx.MaxValue}})
	default:
		c.finish(jsctx.Reply{Err: &jsctx.ThrownError{Stack: text}})
	}
	// The next request starts from a loop turn, not from inside this
	// call.
	go c.r.post(c.r.ctx, event{kind: "ctxeval"})
}

// afterCall is run after every JavaScript call of the loop: a call made
// while the current request's deadline passed is absorbed (see absorb),
// whether the termination cut it short or it finished just before V8
// acted on it; in the second case the termination would otherwise hit
// the next call into V8 (say, the rejection handling after this one).
func (c *ctxServer) afterCall(err error) bool {
	if !c.expiredNow() || c.isOver(err) {
		return false
	}
	return c.absorb()
}

// end records why the context's process ended, for every evaluation
// from now on.
func (c *ctxServer) end(code int) {
	r := c.r
	var err error
	select {
	case <-c.s.Closing():
		err = jsctx.ErrClosed
	default:
		switch {
		case r.exited:
			err = &jsctx.DeadError{Reason: fmt.Sprintf("the context called process.exit(%d)", r.exitCode)}
		case r.terminated.Load() == termHeap || r.heapExhausted():
			err = &jsctx.DeadError{Reason: "JavaScript heap out of memory"}
		case r.terminated.Load() == termExternal:
			err = &jsctx.DeadError{Reason: "external memory limit reached (ArrayBuffers and Buffers)"}
		case r.terminated.Load() == termTimeout:
			err = &jsctx.DeadError{Reason: "CPU time limit exceeded"}
		case r.terminated.Load() == termKilled:
			err = &jsctx.DeadError{Reason: "the context's process was killed"}
		default:
			err = &jsctx.DeadError{Reason: fmt.Sprintf("the context's process ended with status %d", code)}
		}
	}
	if c.cur != nil {
		c.cur.Answer(jsctx.Reply{Err: err})
		c.cur = nil
		c.termMu.Lock()
		c.watchID = 0
		c.termMu.Unlock()
		close(c.stop)
		c.wg.Wait()
	}
	c.s.End(err)
	for req := c.pop(); req != nil; req = c.pop() {
		req.Answer(jsctx.Reply{Err: err})
	}
	if c.settle != nil {
		c.settle.Release()
		c.settle = nil
	}
}

// jsErrorText is the guest-visible text of an exception: its stack when
// V8 gave one.
func jsErrorText(err error) string {
	var jerr *v8.JSError
	if errors.As(err, &jerr) {
		if jerr.StackTrace != "" {
			return jerr.StackTrace
		}
		return jerr.Message
	}
	return err.Error()
}
