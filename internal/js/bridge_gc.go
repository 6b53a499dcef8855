//go:build linux && cgo

package js

/*
void secexecFullGC(void* iso);
int secexecRunTasks(void* iso, int max);
*/
import "C"

import v8 "github.com/tommie/v8go"

// maxTasksPerRun bounds the V8 tasks one gcTasks call runs: each is
// V8's own bounded work (a FinalizationRegistry cleanup runs the guest's
// callbacks, which its CPU limit charges), and a cleanup that leaves more
// to do posts a new task for the next call rather than looping here.
const maxTasksPerRun = 16

// bridgeGC backs globalThis.gc, which the bootstrap installs only for a
// process started with --expose-gc. The collection runs on the isolate's
// own thread, so its time is the guest's CPU time (the kernel's CPUTime
// limit counts that thread) and its work is bounded by the isolate's heap
// limit: a guest calling it in a loop spins only its own budget. It
// returns false when the isolate pointer is unknown (the rejection hook
// is unusable with this v8go).
func bridgeGC(r *rt, _ *callArgs) (*v8.Value, error) {
	if r.rejectIso == nil {
		return r.boolean(false), nil
	}
	C.secexecFullGC(r.rejectIso)
	return r.boolean(true), nil
}

// bridgeGCTasks runs the isolate's pending V8 tasks, among them the
// FinalizationRegistry cleanup a collection posts; gc() calls it from a
// later macrotask, as Node's platform runs them after the collection. It
// returns true when it stopped at maxTasksPerRun (tasks that queued up
// since the isolate started may come first), and gc() then calls it again
// from the next macrotask.
func bridgeGCTasks(r *rt, _ *callArgs) (*v8.Value, error) {
	if r.rejectIso == nil {
		return r.boolean(false), nil
	}
	return r.boolean(int(C.secexecRunTasks(r.rejectIso, maxTasksPerRun)) == maxTasksPerRun), nil
}
