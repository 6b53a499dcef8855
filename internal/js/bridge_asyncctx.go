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

// bridgeCtxGet and bridgeCtxSet back async_hooks' context frames
// (internal/async_context.js): the frame is V8's per-isolate
// continuation data, which V8 carries through promise reactions by
// itself (asyncctx_shim.cc). Both take a bounded, constant amount of
// work and run no guest code; the guest never reaches them (the bridge
// object is private to the bootstrap). ctxGet(box) stores the frame in
// the object box.
func bridgeCtxGet(r *rt, a *callArgs) (*v8.Value, error) {
	box := a.value(0)
	if !rejectHookUsable || box == nil || !box.IsObject() {
		return nil, errno.EINVAL
	}
	return r.num(int(C.secexecCtxGet(handle(box)))), nil
}

// bridgeCtxSet(frame) makes frame, any value (undefined included), the
// current one.
func bridgeCtxSet(r *rt, a *callArgs) (*v8.Value, error) {
	frame := a.value(0)
	if !rejectHookUsable || frame == nil {
		return nil, errno.EINVAL
	}
	return r.num(int(C.secexecCtxSet(handle(frame)))), nil
}

// bridgePromiseHooks installs V8's promise hook calling the four
// functions given (init, resolve, before, after), or removes it when
// called without arguments; arguments past four are ignored. The
// bootstrap installs it only while a guest's hook is enabled; the
// functions are the bootstrap's own dispatchers.
func bridgePromiseHooks(r *rt, a *callArgs) (*v8.Value, error) {
	if !rejectHookUsable || r.rejectIso == nil {
		return r.num(0), nil
	}
	if a.value(0) == nil {
		return r.num(int(C.secexecPromiseHooksSet(r.rejectIso, nil))), nil
	}
	var fns [4]unsafe.Pointer
	for i := range fns {
		fn := a.value(i)
		if fn == nil || !fn.IsFunction() {
			return nil, errno.EINVAL
		}
		fns[i] = handle(fn)
	}
	return r.num(int(C.secexecPromiseHooksSet(r.rejectIso, &fns[0]))), nil
}

// disarmPromiseHooks removes the isolate's promise hook and frees its
// handles; it runs before the isolate is disposed (a later isolate may
// get the same address).
func disarmPromiseHooks(iso unsafe.Pointer) {
	if iso != nil {
		C.secexecPromiseHooksSet(iso, nil)
	}
}
