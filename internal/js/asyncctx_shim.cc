// The async context of AsyncLocalStorage and AsyncResource, carried by V8
// itself through promise reactions: V8 keeps one value per isolate (the
// "continuation preserved embedder data"), captures it in every promise
// reaction job when the job is queued and restores it while the job runs,
// which is how Node 22's AsyncContextFrame follows await and then()
// without promise hooks. V8 reads the value only to copy it; it never
// calls into it, so no guest code runs here.
//
// The V8 API it calls is declared in v8_mirror.h.

#include "v8_mirror.h"

using secexec::GoValue;

extern "C" {

// secexecCtxGet stores the isolate's current context value in box[0] (an
// m_value of a plain object without prototype). It runs inside a call from
// JavaScript, so a handle scope and the context are entered. It returns 0
// when box was unusable or the store failed.
int secexecCtxGet(void* boxValue) {
  GoValue* box = static_cast<GoValue*>(boxValue);
  if (box == nullptr || box->iso == nullptr || box->slot == nullptr) return 0;
  v8::Isolate* iso = box->iso;
  v8::Local<v8::Context> ctx = iso->GetCurrentContext();
  if (ctx.slot_ == nullptr) return 0;
  v8::Local<v8::Value> data = iso->GetContinuationPreservedEmbedderData();
  if (data.slot_ == nullptr) return 0;
  v8::Object* target = reinterpret_cast<v8::Object*>(box->slot);
  v8::Maybe<bool> ok = target->CreateDataProperty(ctx, 0, data);
  return ok.has_value_ ? 1 : 0;
}

// secexecCtxSet makes value (an m_value) the isolate's current context
// value.
int secexecCtxSet(void* value) {
  GoValue* v = static_cast<GoValue*>(value);
  if (v == nullptr || v->iso == nullptr || v->slot == nullptr) return 0;
  v8::Local<v8::Value> data{reinterpret_cast<v8::Value*>(v->slot)};
  v->iso->SetContinuationPreservedEmbedderData(data);
  return 1;
}

}  // extern "C"

// Promise hooks: V8's C++ PromiseHook calls the four JavaScript functions
// the runtime registered (async_context.js), with the promise as the
// receiver and, for init, the parent promise as the argument. Installed
// only while a guest's async hook or v8.promiseHooks hook is enabled, so
// promises cost nothing extra otherwise. A function that throws (or a
// termination) leaves the exception pending, and V8's promise builtins
// return it after the hook, as they do for any embedder hook.

#include <mutex>
#include <unordered_map>

namespace {

using v8::internal::Address;

struct Hooks {
  Address* fn[4] = {nullptr, nullptr, nullptr, nullptr};
};

std::mutex hooksMu;
std::unordered_map<v8::Isolate*, Hooks>* hooks;

void disposeHooks(Hooks& h) {
  for (Address*& f : h.fn) {
    if (f != nullptr) v8::api_internal::DisposeGlobal(f);
    f = nullptr;
  }
}

void onPromiseHook(v8::PromiseHookType type, v8::Local<v8::Promise> promise,
                   v8::Local<v8::Value> parent) {
  v8::Isolate* iso = v8::Isolate::GetCurrent();
  Address* fn;
  {
    std::lock_guard<std::mutex> lock(hooksMu);
    if (hooks == nullptr) return;
    auto it = hooks->find(iso);
    if (it == hooks->end()) return;
    fn = it->second.fn[static_cast<int>(type)];
  }
  if (fn == nullptr || promise.slot_ == nullptr) return;
  v8::Local<v8::Context> ctx = iso->GetCurrentContext();
  if (ctx.slot_ == nullptr) return;
  v8::Local<v8::Value> recv{reinterpret_cast<v8::Value*>(promise.slot_)};
  v8::Local<v8::Value> argv[1] = {parent};
  int argc = parent.slot_ != nullptr ? 1 : 0;
  reinterpret_cast<v8::Function*>(fn)->Call(ctx, recv, argc, argv);
}

}  // namespace

extern "C" {

// secexecPromiseHooksSet installs the four hook functions (m_values of
// functions: init, resolve, before, after) on their isolate, or, with
// fns == nullptr, removes them from iso. It runs inside a call from
// JavaScript on the isolate's thread.
int secexecPromiseHooksSet(void* iso, void** fns) {
  v8::Isolate* i = static_cast<v8::Isolate*>(iso);
  if (i == nullptr) return 0;
  std::lock_guard<std::mutex> lock(hooksMu);
  if (hooks == nullptr) hooks = new std::unordered_map<v8::Isolate*, Hooks>();
  auto it = hooks->find(i);
  if (it != hooks->end()) {
    disposeHooks(it->second);
    hooks->erase(it);
  }
  if (fns == nullptr) {
    i->SetPromiseHook(nullptr);
    return 1;
  }
  Hooks h;
  for (int k = 0; k < 4; k++) {
    GoValue* v = static_cast<GoValue*>(fns[k]);
    if (v == nullptr || v->iso != i || v->slot == nullptr) {
      disposeHooks(h);
      i->SetPromiseHook(nullptr);
      return 0;
    }
    h.fn[k] = v8::api_internal::GlobalizeReference(
        reinterpret_cast<v8::internal::Isolate*>(i), *v->slot);
  }
  (*hooks)[i] = h;
  i->SetPromiseHook(onPromiseHook);
  return 1;
}

}  // extern "C"
