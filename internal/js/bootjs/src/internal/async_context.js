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

class FrameNode {
  constructor(key, value, parent) {
    this.key = key;
    this.value = value;
    this.parent = parent;
  }
}

// withStore is f with key's store set to value (the chain copied without
// key's old node, so it stays as long as the number of storages).
function withStore(f, key, value) {
  if (f !== undefined && f.key === key) return new FrameNode(key, value, f.parent);
  const keep = [];
  for (let n = f; n !== undefined; n = n.parent) if (n.key !== key) P.ArrayPrototypePush(keep, n);
  let parent;
  for (let i = keep.length - 1; i >= 0; i--) parent = new FrameNode(keep[i].key, keep[i].value, parent);
  return new FrameNode(key, value, parent);
}

function lookup(f, key) {
  for (let n = f; n !== undefined; n = n.parent) if (n.key === key) return n.value;
  return undefined;
}

function newAsyncId() { return ++lastId; }

// emit calls the hooks of one kind. A hook that throws ends the process
// as Node's do: its error's stack (or "Error: value" for a thrown
// non-error) on stderr and exit code 1, with no 'uncaughtException'.
function emit(list, a, b, c, d) {
  for (let i = 0; i < list.length; i++) {
    try {
      P.ReflectApply(list[i], undefined, [a, b, c, d]);
    } catch (e) {
      hookFatal(e);
    }
  }
}

function hookFatal(e) {
  const proc = require('../process.js');
  let text;
  try {
    text = typeof e?.stack === 'string' ? e.stack : undefined;
  } catch {
    text = undefined;
  }
  if (text === undefined) {
    const o = { message: typeof e === 'symbol' ? P.SymbolPrototypeToString(e) : e };
    try {
      Error.captureStackTrace(o, hookFatal);
      text = o.stack;
    } catch {
      text = 'Error: async hook threw';
    }
  }
  proc.writeStderr(`${text}\n`);
  proc.process.exit(1);
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

// save records the running scope for leave; it changes nothing, so a
// RangeError of a full stack here leaves the scope as it was. enter then
// makes resource's scope the running one (frame, before hooks); the
// caller runs its callback and calls leave(token) from a finally, which
// restores the scope whatever enter or the callback threw.
// Token is a class, not a literal with __proto__: null, so that tokens
// share one shape (V8 makes such literals dictionaries, slow to build).
class Token {
  constructor() {
    this.id = scope.id;
    this.trigger = scope.trigger;
    this.resource = scope.resource;
    this.depth = stack.length;
    this.frame = undefined;
    this.framed = false;
    this.entered = false;
    this.asyncId = 0;
  }
}

function save() { return new Token(); }

function enter(resource, token) {
  if (state.used) {
    token.frame = frame();
    token.framed = true;
  }
  scope.id = resource[kAsyncId];
  scope.trigger = resource[kTriggerId];
  scope.resource = resource;
  token.entered = true;
  token.asyncId = scope.id;
  if (token.framed) setFrame(resource[kFrame]);
  if (hookLists.before.length > 0) emit(hookLists.before, scope.id);
}

function leave(token) {
  try {
    if (token.entered && hookLists.after.length > 0) emit(hookLists.after, token.asyncId);
  } finally {
    scope.id = token.id;
    scope.trigger = token.trigger;
    scope.resource = token.resource;
    // Promise scopes a reaction left open (a hook enabled or disabled
    // inside it) end here too.
    if (stack.length !== token.depth) stack.length = token.depth;
    if (token.framed) setFrame(token.frame);
  }
}

// destroy tells the destroy hooks once that resource is gone. As in
// Node the ids wait in a queue and the hooks hear them after the running
// callbacks and their ticks and microtasks, from a job of their own; a
// hook disabled by then does not hear them.
let destroyQueue = [];
function destroy(resource) {
  if (hookLists.destroy.length === 0 || resource[kDestroyed]) return;
  resource[kDestroyed] = true;
  destroyId(resource[kAsyncId]);
}

// destroyId queues the destroy of an id whose resource is gone (collected).
function destroyId(id) {
  if (hookLists.destroy.length === 0) return;
  P.ArrayPrototypePush(destroyQueue, id);
  if (destroyQueue.length === 1) quietly(queueMicrotaskJob, flushDestroyed);
}

function flushDestroyed() {
  const ids = destroyQueue;
  destroyQueue = [];
  for (let i = 0; i < ids.length; i++) emit(hookLists.destroy, ids[i]);
}

function setHooks(lists) {
  hookLists = lists;
  state.hooks = lists.init.length + lists.before.length + lists.after.length + lists.destroy.length + lists.promiseResolve.length;
  updatePromiseHooks();
}

// Promises: V8's promise hook (asyncctx_shim.cc) calls the four
// dispatchers below, with the promise as this, while an async hook or a
// v8.promiseHooks hook is enabled. A promise's ids live in a WeakMap, so
// a frozen promise takes them too and the guest sees no new property.
const promiseIds = new P.WeakMapCtor();
let promiseHooksOn = false;
let inPromiseHook = false;

// v8.promiseHooks' hooks, by kind (replaced, never changed in place).
let v8Hooks = { __proto__: null, init: [], settled: [], before: [], after: [] };

function setV8Hooks(lists) {
  v8Hooks = lists;
  updatePromiseHooks();
}

function updatePromiseHooks() {
  const want = state.hooks > 0 || v8Hooks.init.length + v8Hooks.settled.length + v8Hooks.before.length + v8Hooks.after.length > 0;
  if (want === promiseHooksOn) return;
  promiseHooksOn = want;
  if (want) B.promiseHooks(onPromiseInit, onPromiseResolve, onPromiseBefore, onPromiseAfter);
  else B.promiseHooks();
}

class PromiseIds {
  constructor(id, trigger) {
    this.id = id;
    this.trigger = trigger;
  }
}

// promiseIds of p, given on first sight (a promise made before the hooks
// were enabled gets its ids when it is first seen).
function idsOf(p, parent) {
  let ids = P.WeakMapPrototypeGet(promiseIds, p);
  if (ids === undefined) {
    const trigger = parent !== undefined ? idsOf(parent, undefined).id : scope.id;
    ids = new PromiseIds(newAsyncId(), trigger);
    P.WeakMapPrototypeSet(promiseIds, p, ids);
  }
  return ids;
}

// runPromiseHook runs the hook kinds of one event; what a guest's hook
// throws goes to the uncaught-exception path, as in Node, instead of
// out of the promise operation that ran it. A hook's own promises do not
// call the hooks again.
function runPromiseHook(fn, p, parent) {
  if (inPromiseHook) return;
  inPromiseHook = true;
  try {
    fn(p, parent);
  } catch (e) {
    inPromiseHook = false;
    require('./loop.js').fatal(e);
  } finally {
    inPromiseHook = false;
  }
}

// emitV8 runs v8.promiseHooks' hooks; one that throws does not keep the
// others from the event (Node reports each throw as uncaught).
function emitV8(list, p, parent) {
  for (let i = 0; i < list.length; i++) {
    try {
      P.ReflectApply(list[i], undefined, [p, parent]);
    } catch (e) {
      require('./loop.js').fatal(e);
    }
  }
}

// The runtime's own promises (the one that drains the tick queue, those
// of queueMicrotask) are not the guest's: Node makes none there, so the
// hooks never hear of them.
const internalPromises = new P.WeakMapCtor();
let quiet = false;

// quietly runs fn, whose promises the hooks do not see.
function quietly(fn, a) {
  if (!promiseHooksOn) return fn(a);
  const outer = quiet;
  quiet = true;
  try {
    return fn(a);
  } finally {
    quiet = outer;
  }
}

class Microtask {
  constructor(cb) {
    this.callback = cb;
    this[kAsyncId] = 0;
    this[kTriggerId] = 0;
  }
}

// microtask queues cb as queueMicrotask does: a Microtask resource to
// the hooks, run from a promise reaction they do not see.
function microtask(cb, fatal) {
  if (state.hooks === 0 && !state.used) {
    // Nothing can observe the resource: queue the call alone.
    P.PromiseResolve().then(() => {
      try { cb(); } catch (e) { fatal(e); }
    });
    return;
  }
  const resource = new Microtask(cb);
  init(resource, 'Microtask');
  quietly(queueMicrotaskJob, () => {
    const token = save();
    try {
      enter(resource, token);
      cb();
    } catch (e) {
      fatal(e);
    } finally {
      leave(token);
      destroy(resource);
    }
  });
}

function queueMicrotaskJob(job) { P.PromiseResolve().then(job); }

function promiseInit(p, parent) {
  if (quiet || (parent !== undefined && P.WeakMapPrototypeGet(internalPromises, parent))) {
    P.WeakMapPrototypeSet(internalPromises, p, true);
    return;
  }
  if (state.hooks > 0) {
    const ids = idsOf(p, parent);
    if (hookLists.init.length > 0) emit(hookLists.init, ids.id, 'PROMISE', ids.trigger, p);
  }
  if (v8Hooks.init.length > 0) emitV8(v8Hooks.init, p, parent);
}

function promiseResolve(p) {
  if (P.WeakMapPrototypeGet(internalPromises, p)) return;
  if (hookLists.promiseResolve.length > 0) emit(hookLists.promiseResolve, idsOf(p, undefined).id);
  if (v8Hooks.settled.length > 0) emitV8(v8Hooks.settled, p);
}

function promiseBefore(p) {
  if (P.WeakMapPrototypeGet(internalPromises, p)) return;
  if (state.hooks > 0) {
    const ids = idsOf(p, undefined);
    P.ArrayPrototypePush(stack, { id: scope.id, trigger: scope.trigger, resource: scope.resource });
    scope.id = ids.id;
    scope.trigger = ids.trigger;
    scope.resource = p;
    if (hookLists.before.length > 0) emit(hookLists.before, ids.id);
  }
  if (v8Hooks.before.length > 0) emitV8(v8Hooks.before, p);
}

function promiseAfter(p) {
  if (P.WeakMapPrototypeGet(internalPromises, p)) return;
  if (scope.resource === p) {
    if (hookLists.after.length > 0) emit(hookLists.after, scope.id);
    const s = P.ArrayPrototypePop(stack);
    if (s !== undefined) {
      scope.id = s.id;
      scope.trigger = s.trigger;
      scope.resource = s.resource;
    }
  } else if (hookLists.after.length > 0) {
    // A hook enabled inside the reaction saw no before: it still hears
    // the reaction end, as in Node, with nothing to pop.
    emit(hookLists.after, idsOf(p, undefined).id);
  }
  if (v8Hooks.after.length > 0) emitV8(v8Hooks.after, p);
}

function onPromiseInit(parent) { runPromiseHook(promiseInit, this, parent); }
function onPromiseResolve() { runPromiseHook(promiseResolve, this); }
function onPromiseBefore() { runPromiseHook(promiseBefore, this); }
function onPromiseAfter() { runPromiseHook(promiseAfter, this); }

module.exports = {
  state, kAsyncId, kTriggerId, kFrame, scope, topResource,
  frame, setFrame, withStore, lookup, newAsyncId, init, save, enter, leave, destroy, destroyId, kDestroyed, emit,
  hooks: () => hookLists, setHooks, quietly, microtask, v8Hooks: () => v8Hooks, setV8Hooks,
};
