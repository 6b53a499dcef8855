//go:build linux && cgo

package js

/*
int secexecCtxGet(void* box);
int secexecCtxSet(void* value);
*/
import "C"

import (
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
}
