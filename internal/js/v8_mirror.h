// The V8 API the shims (rejections_shim.cc, dynimport_shim.cc,
// terminate_shim.cc, gc_shim.cc, heaplimit_shim.cc, asyncctx_shim.cc) call, declared once here instead of including V8's
// headers, which live in the v8go module, out of reach of this package's
// cgo flags. The declarations mirror V8 13.6's headers (the version the
// pinned v8go links): the compiler mangles the names from them, so a
// signature that drifts fails at link time, and the layouts (handle
// sizes, PromiseRejectMessage, Maybe, MaybeLocal, v8go's m_value) are
// checked against the real headers by TestRejectShimMatchesV8Headers. No
// V8 member function is defined here: every symbol resolves to libv8's
// own definitions.
#ifndef SECEXEC_V8_MIRROR_H
#define SECEXEC_V8_MIRROR_H

#include <stddef.h>
#include <stdint.h>

namespace v8 {

class Isolate;
class Context;
class Value;
class Promise;
class Data;
class String;
class FixedArray;

namespace internal {
class Isolate;
typedef uintptr_t Address;
}  // namespace internal

namespace api_internal {
internal::Address* GlobalizeReference(internal::Isolate* isolate,
                                      internal::Address value);
void DisposeGlobal(internal::Address* global_handle);
}  // namespace api_internal

// Local is one slot pointer (V8 is built without
// V8_ENABLE_DIRECT_HANDLE) and trivially copyable, so they pass and return
// in a register, as these declarations do. A global handle is a slot
// pointer too, which V8's API accepts wherever a Local is expected.
template <class T>
class Local {
 public:
  T* slot_;
};

template <class T>
class MaybeLocal {
 public:
  Local<T> local_;
};

template <class T>
class Maybe {
 public:
  bool has_value_;
  T value_;
};

enum PromiseRejectEvent {
  kPromiseRejectWithNoHandler = 0,
  kPromiseHandlerAddedAfterReject = 1,
  kPromiseRejectAfterResolved = 2,
  kPromiseResolveAfterResolved = 3,
};

class PromiseRejectMessage {
 public:
  Local<Promise> promise_;
  PromiseRejectEvent event_;
  Local<Value> value_;
};

typedef void (*PromiseRejectCallback)(PromiseRejectMessage message);

enum class PromiseHookType { kInit, kResolve, kBefore, kAfter };

typedef void (*PromiseHook)(PromiseHookType type, Local<Promise> promise,
                            Local<Value> parent);

typedef MaybeLocal<Promise> (*HostImportModuleDynamicallyCallback)(
    Local<Context> context, Local<Data> host_defined_options,
    Local<Value> resource_name, Local<String> specifier,
    Local<FixedArray> import_attributes);

typedef size_t (*NearHeapLimitCallback)(void* data, size_t current_heap_limit,
                                        size_t initial_heap_limit);

class Isolate {
 public:
  static Isolate* GetCurrent();
  void AddNearHeapLimitCallback(NearHeapLimitCallback callback, void* data);
  Local<Context> GetCurrentContext();
  void SetPromiseRejectCallback(PromiseRejectCallback callback);
  void SetPromiseHook(PromiseHook hook);
  void SetHostImportModuleDynamicallyCallback(
      HostImportModuleDynamicallyCallback callback);
  void TerminateExecution();
  void CancelTerminateExecution();
  void LowMemoryNotification();
  Local<Value> GetContinuationPreservedEmbedderData();
  void SetContinuationPreservedEmbedderData(Local<Value> data);
};

class Platform;

namespace platform {
enum class MessageLoopBehavior : bool { kDoNotWait = false, kWaitForWork = true };
bool PumpMessageLoop(Platform* platform, Isolate* isolate,
                     MessageLoopBehavior behavior);
}  // namespace platform

class Object {
 public:
  Maybe<bool> CreateDataProperty(Local<Context> context, uint32_t index,
                                 Local<Value> value);
  int GetIdentityHash();
};

class Function {
 public:
  MaybeLocal<Value> Call(Local<Context> context, Local<Value> recv, int argc,
                         Local<Value> argv[]);
};

}  // namespace v8

namespace secexec {

// v8go's m_value: the handle of a value v8go gave to Go. Only the isolate
// and the global slot are read; their offsets are checked by the test.
struct GoValue {
  long id;
  v8::Isolate* iso;
  void* ctx;
  v8::internal::Address* slot;  // v8::Global<v8::Value>'s single slot pointer
};

}  // namespace secexec

#endif  // SECEXEC_V8_MIRROR_H
