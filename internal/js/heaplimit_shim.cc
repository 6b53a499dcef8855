// The isolate's answer when its heap nears the limit. v8go's own callback
// terminates execution and doubles the limit, so that the running script
// can unwind; but one allocation larger than that (a guest flattening a
// 128 MiB rope under a 64 MiB limit, or converting it for a bridge call)
// still ends in V8's fatal out-of-memory, which aborts the whole engine
// process and every VM in it (TestJSPayloadBombs/hugeString). V8 calls
// only the callback added last, so this one replaces v8go's: it also
// terminates, and raises the limit by at least the largest single
// allocation V8 makes (a flat string: 2^29 two-byte characters, 1 GiB).
// The headroom is reserved, not allocated; the process is terminated at
// its next interrupt check and its heap freed when the isolate is
// disposed, and the runtime reports it as out of memory (exit 134).

#include "v8_mirror.h"

namespace {

const size_t kHeadroom = size_t(1280) << 20;

size_t secexecNearHeapLimit(void* data, size_t current_heap_limit, size_t initial_heap_limit) {
  (void)initial_heap_limit;
  static_cast<v8::Isolate*>(data)->TerminateExecution();
  return current_heap_limit + (current_heap_limit > kHeadroom ? current_heap_limit : kHeadroom);
}

}  // namespace

extern "C" {

// secexecGuardHeap installs the callback on iso. Called on the isolate's
// thread with its lock held, when a process's runtime is set up.
void secexecGuardHeap(void* iso) {
  if (iso != nullptr) {
    static_cast<v8::Isolate*>(iso)->AddNearHeapLimitCallback(secexecNearHeapLimit, iso);
  }
}

}  // extern "C"
