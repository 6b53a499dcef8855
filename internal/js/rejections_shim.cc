// Unhandled promise rejections need V8's PromiseRejectCallback, which
// tommie/v8go does not expose. This file installs one on an isolate. The
// callback runs inside V8's promise machinery, where running JavaScript
// would let an exception or a termination (the heap limit's, the time
// limit's) be swallowed, so it only records the event: global handles of
// the promise and the reason, bounded per isolate. The runtime drains the
// records into a JavaScript object from a bridge call, after the
// macrotask's microtasks ran, and settles them there (rejections.js).
//
// The V8 API it calls is declared in v8_mirror.h.

#include <mutex>
#include <unordered_map>
#include <vector>

#include "v8_mirror.h"

namespace {

using v8::internal::Address;

using secexec::GoValue;

// A record is a rejection with no handler (reason set) or a handler
// attached later (reason null); a rejection whose handler came before the
// drain is dropped (promise null).
struct Record {
  Address* promise;
  Address* reason;
};

// defaultMaxRecords bounds the records of one isolate between two drains (16
// bytes each, plus two global handles): past it the isolate is out of
// memory, as Node would be holding as many in its own tables.
const size_t defaultMaxRecords = 1 << 20;

struct State {
  std::vector<Record> records;
  // Rejections waiting, by the promise's identity hash (stable across
  // garbage collections), so that a handler attached later cancels its
  // rejection's record instead of adding one.
  std::unordered_multimap<int, size_t> byHash;
  size_t live = 0;  // records not dropped
  size_t maxRecords = defaultMaxRecords;
  bool overflow = false;
};

std::mutex statesMu;
std::unordered_map<v8::Isolate*, State>* states;

Address* globalize(v8::Isolate* iso, void* slot) {
  Address value = *static_cast<Address*>(slot);
  return v8::api_internal::GlobalizeReference(
      reinterpret_cast<v8::internal::Isolate*>(iso), value);
}

void dispose(Record& r) {
  if (r.promise != nullptr) v8::api_internal::DisposeGlobal(r.promise);
  if (r.reason != nullptr) v8::api_internal::DisposeGlobal(r.reason);
  r.promise = r.reason = nullptr;
}

void onPromiseReject(v8::PromiseRejectMessage msg) {
  if (msg.event_ != v8::kPromiseRejectWithNoHandler &&
      msg.event_ != v8::kPromiseHandlerAddedAfterReject) {
    return;
  }
  if (msg.promise_.slot_ == nullptr) return;
  v8::Isolate* iso = v8::Isolate::GetCurrent();
  std::lock_guard<std::mutex> lock(statesMu);
  if (states == nullptr) return;
  auto it = states->find(iso);
  if (it == states->end()) return;
  State& st = it->second;
  Address promise = *reinterpret_cast<Address*>(msg.promise_.slot_);
  int hash = reinterpret_cast<v8::Object*>(msg.promise_.slot_)->GetIdentityHash();
  if (msg.event_ == v8::kPromiseHandlerAddedAfterReject) {
    auto range = st.byHash.equal_range(hash);
    for (auto h = range.first; h != range.second; ++h) {
      Record& r = st.records[h->second];
      if (r.promise != nullptr && r.reason != nullptr && *r.promise == promise) {
        dispose(r);
        st.live--;
        if (h->second + 1 == st.records.size()) st.records.pop_back();
        st.byHash.erase(h);
        return;
      }
    }
  }
  // Dropped records leave holes until the drain; those are bounded too.
  if (st.live >= st.maxRecords || st.records.size() >= 4 * st.maxRecords) {
    // The runtime reports this as running out of heap; terminating now
    // also stops a loop that would otherwise run without end.
    if (!st.overflow) iso->TerminateExecution();
    st.overflow = true;
    return;
  }
  Record r{globalize(iso, msg.promise_.slot_), nullptr};
  if (msg.event_ == v8::kPromiseRejectWithNoHandler) {
    if (msg.value_.slot_ != nullptr) {
      r.reason = globalize(iso, msg.value_.slot_);
    } else {
      // No reason given: the promise stands in (rejections.js reads the
      // promise's own result then).
      r.reason = globalize(iso, msg.promise_.slot_);
    }
    st.byHash.emplace(hash, st.records.size());
  }
  st.records.push_back(r);
  st.live++;
}

State* find(v8::Isolate* iso) {
  if (states == nullptr) return nullptr;
  auto it = states->find(iso);
  return it == states->end() ? nullptr : &it->second;
}

}  // namespace

extern "C" {

// secexecRejectArm installs the callback on the isolate of value (any v8go
// m_value of that isolate) and returns the isolate. maxRecords > 0
// replaces the default bound.
void* secexecRejectArm(void* value, int maxRecords) {
  GoValue* v = static_cast<GoValue*>(value);
  if (v == nullptr || v->iso == nullptr) return nullptr;
  {
    std::lock_guard<std::mutex> lock(statesMu);
    if (states == nullptr) states = new std::unordered_map<v8::Isolate*, State>();
    State& st = (*states)[v->iso];
    if (maxRecords > 0) st.maxRecords = static_cast<size_t>(maxRecords);
  }
  v->iso->SetPromiseRejectCallback(onPromiseReject);
  return v->iso;
}

// secexecRejectPending reports 0 (nothing recorded), 1 (records wait) or
// -1 (the isolate overflowed its bound).
int secexecRejectPending(void* iso) {
  std::lock_guard<std::mutex> lock(statesMu);
  State* st = find(static_cast<v8::Isolate*>(iso));
  if (st == nullptr) return 0;
  if (st->overflow) return -1;
  return st->records.empty() ? 0 : 1;
}

// secexecRejectDrain moves the records, in order, into box (an m_value of
// a plain object without prototype) as box[2i] = promise and box[2i+1] =
// reason, or box itself when a handler was attached later. It must run
// inside a call from JavaScript (the isolate and its context entered). It
// returns the number of records moved.
int secexecRejectDrain(void* boxValue) {
  GoValue* box = static_cast<GoValue*>(boxValue);
  if (box == nullptr || box->iso == nullptr || box->slot == nullptr) return 0;
  v8::Isolate* iso = box->iso;
  std::vector<Record> records;
  {
    std::lock_guard<std::mutex> lock(statesMu);
    State* st = find(iso);
    if (st == nullptr) return 0;
    records.swap(st->records);
    st->byHash.clear();
    st->live = 0;
  }
  v8::Local<v8::Context> ctx = iso->GetCurrentContext();
  v8::Object* target = reinterpret_cast<v8::Object*>(box->slot);
  int moved = 0;
  bool ok = ctx.slot_ != nullptr;
  for (Record& r : records) {
    if (r.promise == nullptr) continue;  // handled before the drain
    if (ok) {
      v8::Local<v8::Value> p{reinterpret_cast<v8::Value*>(r.promise)};
      v8::Local<v8::Value> why{reinterpret_cast<v8::Value*>(
          r.reason != nullptr ? r.reason : box->slot)};
      // CreateDataProperty defines own properties: no setter of the
      // guest's runs, and an allocation failure or a termination only
      // makes it report Nothing.
      v8::Maybe<bool> a = target->CreateDataProperty(ctx, 2 * moved, p);
      v8::Maybe<bool> b = a.has_value_ ? target->CreateDataProperty(ctx, 2 * moved + 1, why) : a;
      ok = a.has_value_ && b.has_value_;
      if (ok) moved++;
    }
    dispose(r);
  }
  return moved;
}

// secexecRejectDisarm removes the callback and frees the records; it must
// run on the isolate's thread before the isolate is disposed (a later
// isolate may get the same address).
void secexecRejectDisarm(void* iso) {
  v8::Isolate* i = static_cast<v8::Isolate*>(iso);
  i->SetPromiseRejectCallback(nullptr);
  std::vector<Record> records;
  {
    std::lock_guard<std::mutex> lock(statesMu);
    State* st = find(i);
    if (st == nullptr) return;
    records.swap(st->records);
    states->erase(i);
  }
  for (Record& r : records) dispose(r);
}

}  // extern "C"
