//go:build linux && cgo

package js

/*
void secexecCancelTerminate(void* iso);
*/
import "C"

import "unsafe"

// cancelTerminate clears a termination of the isolate (iso as
// armRejections returned it). It reports false when it cannot: without
// the rejection hook's isolate pointer there is nothing to call.
func cancelTerminate(iso unsafe.Pointer) bool {
	if iso == nil {
		return false
	}
	C.secexecCancelTerminate(iso)
	return true
}
