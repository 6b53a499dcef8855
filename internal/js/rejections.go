//go:build linux && cgo

package js

/*
#cgo CXXFLAGS: -std=c++17 -fno-rtti -fno-exceptions -fPIC -Wall
void* secexecRejectArm(void* value, int maxRecords);
int secexecRejectPending(void* iso);
int secexecRejectDrain(void* box);
void secexecRejectDisarm(void* iso);
void secexecGuardHeap(void* iso);
*/
import "C"

import (
	"reflect"
	"unsafe"

	v8 "github.com/tommie/v8go"

	"github.com/secexec/secexec/kernel/errno"
)

// rejectHookUsable says whether v8go's Value still starts with the
// pointer to its C handle (the m_value the shim reads). If a v8go upgrade
// changed that, unhandled rejections go unreported rather than the shim
// reading the wrong memory.
var rejectHookUsable = func() bool {
	t := reflect.TypeFor[v8.Value]()
	if t.NumField() == 0 {
		return false
	}
	f := t.Field(0)
	return f.Name == "ptr" && f.Offset == 0 && f.Type.Kind() == reflect.Pointer
}()

// handle is the C handle (v8go's m_value) behind a value.
func handle(v *v8.Value) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(v))
}

// armRejections installs V8's PromiseRejectCallback on the isolate of v
// (any value of it) and returns the isolate, or nil when the hook cannot
// be used. maxRecords > 0 replaces the default bound on records.
func armRejections(v *v8.Value, maxRecords int) unsafe.Pointer {
	if !rejectHookUsable || v == nil {
		return nil
	}
	iso := C.secexecRejectArm(handle(v), C.int(maxRecords))
	// The same isolate pointer serves the heap guard (heaplimit_shim.cc):
	// a single allocation past the limit terminates the process instead
	// of aborting the engine.
	C.secexecGuardHeap(iso)
	return iso
}

// Results of pendingRejections.
const (
	rejectionsNone     = 0
	rejectionsWaiting  = 1
	rejectionsOverflow = -1
)

// pendingRejections says whether rejection records wait to be drained,
// or whether the isolate recorded more than its bound.
func pendingRejections(iso unsafe.Pointer) int {
	if iso == nil {
		return rejectionsNone
	}
	return int(C.secexecRejectPending(iso))
}

// drainRejections moves the records into box (see rejections_shim.cc);
// it runs inside a bridge call.
func drainRejections(box *v8.Value) int {
	if !rejectHookUsable || box == nil {
		return 0
	}
	return int(C.secexecRejectDrain(handle(box)))
}

// disarmRejections removes the hook and frees its records; it runs
// before the isolate is disposed.
func disarmRejections(iso unsafe.Pointer) {
	if iso != nil {
		C.secexecRejectDisarm(iso)
	}
}

// bridgeRejectTake moves the isolate's unhandled-rejection records into
// the object box (see drainRejections) and returns their count.
func bridgeRejectTake(r *rt, a *callArgs) (*v8.Value, error) {
	box := a.value(0)
	if box == nil || !box.IsObject() {
		return nil, errno.EINVAL
	}
	return r.num(drainRejections(box)), nil
}
