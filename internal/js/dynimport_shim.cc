// import() in code V8 compiles from a string at run time — eval, new
// Function, vm scripts — never passes through the module transform, which
// turns import() in module files into a call of the loader. V8 asks the
// embedder through its HostImportModuleDynamicallyCallback, which
// tommie/v8go does not expose and without which V8 rejects with "Not
// supported" (prettier loads its plugins this way). This file installs
// one: it calls a JavaScript function of the bootstrap's with the
// specifier and the referring script's name (V8 walks from eval code to
// the script that called eval) and returns the promise that function
// returns. The function is the runtime's own, captured before any guest
// code ran.
//
// The V8 API it calls is declared in v8_mirror.h.

#include <mutex>
#include <unordered_map>

#include "v8_mirror.h"

namespace {

using v8::internal::Address;

using secexec::GoValue;

std::mutex importMu;
std::unordered_map<v8::Isolate*, Address*>* importFns;

v8::MaybeLocal<v8::Promise> onImport(v8::Local<v8::Context> context,
                                     v8::Local<v8::Data>,
                                     v8::Local<v8::Value> resource,
                                     v8::Local<v8::String> specifier,
                                     v8::Local<v8::FixedArray>) {
  v8::Isolate* iso = v8::Isolate::GetCurrent();
  Address* fn = nullptr;
  {
    std::lock_guard<std::mutex> lock(importMu);
    if (importFns != nullptr) {
      auto it = importFns->find(iso);
      if (it != importFns->end()) fn = it->second;
    }
  }
  // Armed only with a function (secexecImportArm), so fn is set; the
  // check keeps a disarmed isolate from calling a freed handle.
  if (fn == nullptr || specifier.slot_ == nullptr) return v8::MaybeLocal<v8::Promise>{};
  v8::Local<v8::Value> argv[2] = {
      {reinterpret_cast<v8::Value*>(specifier.slot_)},
      resource,
  };
  int argc = resource.slot_ != nullptr ? 2 : 1;
  v8::Local<v8::Value> recv{reinterpret_cast<v8::Value*>(fn)};
  // Empty when the function threw or the isolate is terminating: V8
  // then propagates that exception, as the callback's contract asks.
  v8::MaybeLocal<v8::Value> r =
      reinterpret_cast<v8::Function*>(fn)->Call(context, recv, argc, argv);
  return v8::MaybeLocal<v8::Promise>{
      {reinterpret_cast<v8::Promise*>(r.local_.slot_)}};
}

}  // namespace

extern "C" {

// secexecImportArm makes fnValue (an m_value of a function that always
// returns a promise) the isolate's import() handler and returns 1.
int secexecImportArm(void* fnValue) {
  GoValue* v = static_cast<GoValue*>(fnValue);
  if (v == nullptr || v->iso == nullptr || v->slot == nullptr) return 0;
  Address* global = v8::api_internal::GlobalizeReference(
      reinterpret_cast<v8::internal::Isolate*>(v->iso), *v->slot);
  Address* old = nullptr;
  {
    std::lock_guard<std::mutex> lock(importMu);
    if (importFns == nullptr) importFns = new std::unordered_map<v8::Isolate*, Address*>();
    auto it = importFns->find(v->iso);
    if (it != importFns->end()) old = it->second;
    (*importFns)[v->iso] = global;
  }
  if (old != nullptr) v8::api_internal::DisposeGlobal(old);
  v->iso->SetHostImportModuleDynamicallyCallback(onImport);
  return 1;
}

// secexecImportDisarm removes the handler; it runs on the isolate's
// thread before the isolate is disposed.
void secexecImportDisarm(void* iso) {
  v8::Isolate* i = static_cast<v8::Isolate*>(iso);
  i->SetHostImportModuleDynamicallyCallback(nullptr);
  Address* fn = nullptr;
  {
    std::lock_guard<std::mutex> lock(importMu);
    if (importFns == nullptr) return;
    auto it = importFns->find(i);
    if (it == importFns->end()) return;
    fn = it->second;
    importFns->erase(it);
  }
  v8::api_internal::DisposeGlobal(fn);
}

}  // extern "C"
