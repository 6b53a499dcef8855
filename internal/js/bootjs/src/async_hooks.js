'use strict';
// async_hooks: AsyncLocalStorage without propagation through V8's
// promise hooks (not exposed to embedders here): run() scopes the store
// to a synchronous call and the promise chains started inside it.
class AsyncLocalStorage {
  #store; #enabled = false;
  getStore() { return this.#enabled ? this.#store : undefined; }
  run(store, fn, ...args) {
    const prev = this.#store, prevEnabled = this.#enabled;
    this.#store = store;
    this.#enabled = true;
    try { return fn(...args); } finally { this.#store = prev; this.#enabled = prevEnabled; }
  }
  enterWith(store) { this.#store = store; this.#enabled = true; }
  exit(fn, ...args) {
    const prev = this.#store, prevEnabled = this.#enabled;
    this.#enabled = false;
    try { return fn(...args); } finally { this.#store = prev; this.#enabled = prevEnabled; }
  }
  disable() { this.#enabled = false; this.#store = undefined; }
  static bind(fn) { return fn; }
  static snapshot() { return (fn, ...args) => fn(...args); }
}
class AsyncResource {
  constructor(type) { this.type = type; }
  runInAsyncScope(fn, thisArg, ...args) { return Reflect.apply(fn, thisArg, args); }
  emitDestroy() { return this; }
  asyncId() { return 1; }
  triggerAsyncId() { return 0; }
  bind(fn) { return fn.bind(this); }
  static bind(fn) { return fn; }
}
module.exports = {
  AsyncLocalStorage, AsyncResource,
  createHook: () => ({ enable() { return this; }, disable() { return this; } }),
  executionAsyncId: () => 1, triggerAsyncId: () => 0, executionAsyncResource: () => ({}),
};
