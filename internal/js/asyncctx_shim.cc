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
