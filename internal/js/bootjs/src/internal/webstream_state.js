'use strict';
// Node's streams read a web stream's state through registered symbols
// (nodejs.stream.*, nodejs.webstream.*) that Node's own WHATWG streams
// define and web-streams-polyfill does not: stream.finished() on a
// ReadableStream waits on [kIsClosedPromise], stream.isErrored/isReadable/
// isDisturbed read the flags. Without them finished() threw on every web
// stream, which made undici's fetch abort a response whose body arrived
// after its headers (the body read never settled and the process exited
// 0 with nothing read). install gives the polyfill's classes the same
// members, derived from the polyfill's own state slots.
const { defineProperty } = Object;
const SymbolFor = Symbol.for;
const PromiseCtor = Promise;
const PromiseThen = Promise.prototype.then;
const FunctionCall = Function.prototype.call.bind(Function.prototype.call);

const kIsClosedPromise = SymbolFor('nodejs.webstream.isClosedPromise');
const kControllerErrorFunction = SymbolFor('nodejs.webstream.controllerErrorFunction');
const kIsErrored = SymbolFor('nodejs.stream.errored');
const kIsReadable = SymbolFor('nodejs.stream.readable');
const kIsDisturbed = SymbolFor('nodejs.stream.disturbed');

// The polyfill keeps a stream's state in a plain `_state` field that it
// assigns on every transition; an accessor on the prototype sees each one
// (the polyfill never defines the field as an own property).
const kState = Symbol('state');
const kClosed = Symbol('closedDeferred');

function noop() {}

// settle resolves or rejects d as the stream's state says, if it is final.
function settle(stream, d) {
  const state = stream[kState];
  if (state === 'closed') {
    d.resolve();
  } else if (state === 'errored') {
    // The polyfill stores the error just after (readable) or just before
    // (writable) the state; read it once both are set.
    queueMicrotask(() => d.reject(stream._storedError));
  }
}

function defineState(proto, flags) {
  defineProperty(proto, '_state', {
    __proto__: null,
    configurable: true,
    get() { return this[kState]; },
    set(v) {
      this[kState] = v;
      const d = this[kClosed];
      if (d !== undefined) settle(this, d);
    },
  });
  defineProperty(proto, kIsClosedPromise, {
    __proto__: null,
    configurable: true,
    get() {
      let d = this[kClosed];
      if (d !== undefined) return d;
      let resolve, reject;
      const promise = new PromiseCtor((res, rej) => { resolve = res; reject = rej; });
      FunctionCall(PromiseThen, promise, undefined, noop); // handled, as Node's
      d = { __proto__: null, promise, resolve, reject };
      this[kClosed] = d;
      settle(this, d);
      return d;
    },
  });
  for (const [sym, get] of flags) {
    defineProperty(proto, sym, { __proto__: null, configurable: true, get });
  }
}

// install adds the members to the polyfill's ReadableStream and
// WritableStream prototypes; it runs once, when the polyfill loads.
function install(ws) {
  defineState(ws.ReadableStream.prototype, [
    [kIsErrored, function() { return this[kState] === 'errored'; }],
    [kIsReadable, function() { return this[kState] === 'readable'; }],
    [kIsDisturbed, function() { return this._disturbed === true; }],
    [kControllerErrorFunction, function() {
      const c = this._readableStreamController;
      return (e) => c.error(e);
    }],
  ]);
  // Node's WritableStream has no flags, only the closed promise.
  defineState(ws.WritableStream.prototype, [
    [kControllerErrorFunction, function() {
      const c = this._writableStreamController;
      return (e) => c.error(e);
    }],
  ]);
}

module.exports = { install };
