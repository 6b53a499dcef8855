// Isolate::CancelTerminateExecution, which tommie/v8go does not expose:
// a persistent context whose evaluation was stopped at its deadline
// clears the termination and goes on serving (see context.go), as Node's
// vm module does after a timeout. The V8 API is declared in v8_mirror.h.

#include "v8_mirror.h"

extern "C" {

// secexecCancelTerminate cancels a requested or propagating termination
// of iso. It is called on the isolate's own thread, between calls into
// V8.
void secexecCancelTerminate(void* iso) {
  if (iso != nullptr) static_cast<v8::Isolate*>(iso)->CancelTerminateExecution();
}

}  // extern "C"
