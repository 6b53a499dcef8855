'use strict';
// LazyTransform is Node's base of Hash and Hmac: a Transform stream whose
// stream state is made only when a stream feature is first used, so that
// createHash(...).update(...).digest() costs nothing more than the hash.
// Here the stream module itself also loads on first use (readable-stream
// takes tens of milliseconds to load): until then the prototype chain
// ends in a proxy that links LazyTransform.prototype to
// Transform.prototype when a lookup reaches it (a method such as pipe or
// on, an instanceof check) and then answers from there.

let Transform;
function link() {
  if (Transform) return Transform;
  Transform = require('../stream.js').Transform;
  Object.setPrototypeOf(LazyTransform.prototype, Transform.prototype);
  Object.setPrototypeOf(LazyTransform, Transform);
  return Transform;
}

function LazyTransform(options) {
  this._options = options;
}

const linker = new Proxy({}, {
  get(target, key, receiver) { return Reflect.get(link().prototype, key, receiver); },
  set(target, key, value, receiver) { return Reflect.set(link().prototype, key, value, receiver); },
  has(target, key) { return Reflect.has(link().prototype, key); },
  getPrototypeOf() { return link().prototype; },
});
Object.setPrototypeOf(LazyTransform.prototype, linker);

// The getters make the stream state on first use; the setters let the
// Transform constructor store it as own properties.
function makeGetter(name) {
  return function () {
    link().call(this, this._options);
    this._writableState.decodeStrings = false;
    return this[name];
  };
}
function makeSetter(name) {
  return function (val) {
    Object.defineProperty(this, name, { value: val, enumerable: true, configurable: true, writable: true });
  };
}
for (const name of ['_readableState', '_writableState', '_transformState']) {
  Object.defineProperty(LazyTransform.prototype, name, {
    get: makeGetter(name), set: makeSetter(name), configurable: true, enumerable: true,
  });
}

module.exports = { LazyTransform };
