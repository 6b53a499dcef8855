//go:build linux && cgo

package js

/*
int secexecCtxGet(void* box);
int secexecCtxSet(void* value);
int secexecPromiseHooksSet(void* iso, void** fns);
*/
import "C"

import (
	"unsafe"

	v8 "github.com/tommie/v8go"

	"github.com/secexec/secexec/kernel/errno"
)

func init() {
	// ctxGet and ctxSet back async_hooks' context frames
	// (internal/async_context.js): the frame is V8's per-isolate
	// continuation data, which V8 carries through promise reactions by
	// itself (asyncctx_shim.cc). Both take a bounded, constant amount of
	// work and run no guest code; the guest never reaches them (the
	// bridge object is private to the bootstrap).
	register("ctxGet", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		if !rejectHookUsable || len(args) < 1 || !args[0].IsObject() {
			return nil, errno.EINVAL
		}
		return r.num(int(C.secexecCtxGet(handle(args[0])))), nil
	})
	register("ctxSet", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		if !rejectHookUsable || len(args) < 1 {
			return nil, errno.EINVAL
		}
		return r.num(int(C.secexecCtxSet(handle(args[0])))), nil
	})
	// promiseHooks installs V8's promise hook calling the four functions
	// given (init, resolve, before, after), or removes it when called
	// without arguments. The bootstrap installs it only while a guest's
	// hook is enabled; the functions are the bootstrap's own dispatchers.
	register("promiseHooks", func(r *rt, args []*v8.Value) (*v8.Value, error) {
		if !rejectHookUsable || r.rejectIso == nil {
			return r.num(0), nil
		}
		if len(args) == 0 {
			return r.num(int(C.secexecPromiseHooksSet(r.rejectIso, nil))), nil
		}
		if len(args) != 4 {
			return nil, errno.EINVAL
		}
		var fns [4]unsafe.Pointer
		for i, a := range args {
			if !a.IsFunction() {
				return nil, errno.EINVAL
			}
			fns[i] = handle(a)
		}
		return r.num(int(C.secexecPromiseHooksSet(r.rejectIso, &fns[0]))), nil
	})
}

// disarmPromiseHooks removes the isolate's promise hook and frees its
// handles; it runs before the isolate is disposed (a later isolate may
// get the same address).
func disarmPromiseHooks(iso unsafe.Pointer) {
	if iso != nil {
		C.secexecPromiseHooksSet(iso, nil)
	}
}
