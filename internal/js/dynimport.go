//go:build linux && cgo

package js

/*
int secexecImportArm(void* fn);
void secexecImportDisarm(void* iso);
*/
import "C"

import (
	"unsafe"

	v8 "github.com/tommie/v8go"
)

// armDynamicImport makes fn the handler of import() in code compiled at
// run time (eval, new Function, vm scripts; see dynimport_shim.cc). It
// reports whether the handler was installed.
func armDynamicImport(fn *v8.Function) bool {
	if !rejectHookUsable || fn == nil {
		return false
	}
	return C.secexecImportArm(handle(fn.Value)) == 1
}

// disarmDynamicImport removes the handler of iso (as armRejections
// returned it); it runs before the isolate is disposed.
func disarmDynamicImport(iso unsafe.Pointer) {
	if iso != nil {
		C.secexecImportDisarm(iso)
	}
}
