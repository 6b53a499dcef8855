'use strict';
// The async context the schedulers carry for async_hooks: async ids
// (executionAsyncId, triggerAsyncId, the hooks' init/before/after/destroy)
// and the context frame of AsyncLocalStorage.
//
// The frame is V8's per-isolate continuation data (asyncctx_shim.cc):
// V8 itself captures it in every promise reaction and restores it while
// the reaction runs, so stores follow await and then() as in Node 22's
// AsyncContextFrame. Timers, immediates and ticks capture it when queued
// and restore it around their callback (capture/enter/leave below).
// Until a guest makes an AsyncLocalStorage or an AsyncResource,
// state.used is false and no bridge call is made; until it enables a
// hook, no hook list is walked.
const { B } = require('./bridge.js');
const P = require('./primordials.js');

const state = { used: false, hooks: 0 };

// The hooks enabled, by kind; each list is replaced, never changed in
// place, so that a hook enabling or disabling one while they run does
// not change the walk under way.
let hookLists = { __proto__: null, init: [], before: [], after: [], destroy: [], promiseResolve: [] };

// The async ids: 1 is the main script's, 0 none; the stack holds the
// scopes entered (id, trigger, resource) below the running one.
let lastId = 1;
const topResource = P.ObjectCreate(null);
const scope = { id: 1, trigger: 0, resource: topResource };
const stack = [];

const kAsyncId = Symbol('asyncId');
const kTriggerId = Symbol('triggerAsyncId');
const kFrame = Symbol('asyncContextFrame');
const kDestroyed = Symbol('asyncDestroyed');

const box = P.ObjectCreate(null);

// frame is the current context frame: a chain of { key, value, parent }
// with each AsyncLocalStorage at most once, or undefined.
function frame() {
  if (!state.used) return undefined;
  B.ctxGet(box);
  const f = box[0];
  box[0] = undefined;
  return f;
}

function setFrame(f) { B.ctxSet(f); }

// withStore is f with key's store set to value (the chain copied without
// key's old node, so it stays as long as the number of storages).
function withStore(f, key, value) {
  if (f !== undefined && f.key === key) return { __proto__: null, key, value, parent: f.parent };
  const keep = [];
  for (let n = f; n !== undefined; n = n.parent) if (n.key !== key) P.ArrayPrototypePush(keep, n);
  let parent;
  for (let i = keep.length - 1; i >= 0; i--) parent = { __proto__: null, key: keep[i].key, value: keep[i].value, parent };
  return { __proto__: null, key, value, parent };
}

function lookup(f, key) {
  for (let n = f; n !== undefined; n = n.parent) if (n.key === key) return n.value;
  return undefined;
}

function newAsyncId() { return ++lastId; }

function emit(list, a, b, c, d) {
  for (let i = 0; i < list.length; i++) P.ReflectApply(list[i], undefined, [a, b, c, d]);
}

// init gives resource its ids, records the frame it belongs to and
// tells the init hooks; type names the resource as Node's providers do.
function init(resource, type, trigger) {
  const id = newAsyncId();
  resource[kAsyncId] = id;
  resource[kTriggerId] = trigger === undefined ? scope.id : trigger;
  if (state.used) resource[kFrame] = frame();
  if (hookLists.init.length > 0) emit(hookLists.init, id, type, resource[kTriggerId], resource);
}

// enter makes resource's scope the running one (before hooks, frame) and
// returns what leave needs to restore.
function enter(resource) {
  P.ArrayPrototypePush(stack, { id: scope.id, trigger: scope.trigger, resource: scope.resource });
  scope.id = resource[kAsyncId];
  scope.trigger = resource[kTriggerId];
  scope.resource = resource;
  let prev;
  if (state.used) {
    prev = frame();
    setFrame(resource[kFrame]);
  }
  if (hookLists.before.length > 0) emit(hookLists.before, scope.id);
  return prev;
}

// leave ends the scope enter began; it runs from a finally, so a callback
// that throws leaves the stack as it found it.
function leave(prev) {
  if (hookLists.after.length > 0) emit(hookLists.after, scope.id);
  if (state.used) setFrame(prev);
  const s = P.ArrayPrototypePop(stack);
  if (s !== undefined) {
    scope.id = s.id;
    scope.trigger = s.trigger;
    scope.resource = s.resource;
  }
}

// destroy tells the destroy hooks once that resource is gone.
function destroy(resource) {
  if (resource[kDestroyed]) return;
  resource[kDestroyed] = true;
  if (hookLists.destroy.length > 0) emit(hookLists.destroy, resource[kAsyncId]);
}

function setHooks(lists) {
  hookLists = lists;
  state.hooks = lists.init.length + lists.before.length + lists.after.length + lists.destroy.length + lists.promiseResolve.length;
}

module.exports = {
  state, kAsyncId, kTriggerId, kFrame, scope, topResource,
  frame, setFrame, withStore, lookup, newAsyncId, init, enter, leave, destroy, emit,
  hooks: () => hookLists, setHooks,
};
