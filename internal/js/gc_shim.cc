// A full garbage collection of one isolate, for node's --expose-gc, and
// the running of the isolate's pending foreground tasks (V8 posts the
// FinalizationRegistry cleanup there after a collection).
//
// V8's own gc() extension is switched on by a process-wide flag (which
// would give every guest's isolate a gc global) and
// RequestGarbageCollectionForTesting refuses to run without that flag;
// LowMemoryNotification collects everything collectable in the calling
// isolate only, synchronously, on the isolate's own thread.

#include "v8_mirror.h"

// v8go's platform (isolate.cc: a std::unique_ptr<v8::Platform>, one
// pointer, at namespace scope), whose foreground task queues v8go never
// pumps.
extern v8::Platform* default_platform;

extern "C" {

// secexecFullGC collects garbage in iso. It is called from a bridge
// function, so on the isolate's thread with its lock held.
void secexecFullGC(void* iso) {
  if (iso != nullptr) static_cast<v8::Isolate*>(iso)->LowMemoryNotification();
}

// secexecRunTasks runs at most max of iso's pending foreground tasks
// without waiting for more, and returns how many ran. Called from a
// bridge function like secexecFullGC.
int secexecRunTasks(void* iso, int max) {
  if (iso == nullptr || default_platform == nullptr) return 0;
  int n = 0;
  while (n < max &&
         v8::platform::PumpMessageLoop(default_platform, static_cast<v8::Isolate*>(iso),
                                       v8::platform::MessageLoopBehavior::kDoNotWait)) {
    n++;
  }
  return n;
}

}  // extern "C"
