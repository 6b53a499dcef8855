'use strict';
// process.env as Node has it: every value a string (what is set is
// converted, as the C environment would), symbols neither stored nor
// found, and only plain data properties may be defined on it.
const { codedError } = require('./errors.js');

// warned is set once DEP0104 was emitted: Node warns once per process,
// under --pending-deprecation (or NODE_PENDING_DEPRECATION=1).
let warned = false;
function pendingDeprecation(env) {
  return env.NODE_PENDING_DEPRECATION === '1' || (process.execArgv || []).includes('--pending-deprecation');
}

function envProxy(target) {
  return new Proxy(target, {
    // What is not a variable comes from Object.prototype, as in Node.
    get(t, key) { return Reflect.get(t, key); },
    set(t, key, value) {
      // Converting throws a TypeError for a symbol key or value, as Node.
      const k = `${key}`, v = `${value}`;
      if (!warned && typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean' && pendingDeprecation(t)) {
        warned = true;
        process.emitWarning('Assigning any value other than a string, number, or boolean to a process.env property ' +
          'is deprecated. Please make sure to convert the value to a string before setting process.env with it.',
        'DeprecationWarning', 'DEP0104');
      }
      // setenv(3) refuses an empty name: the variable is not set.
      if (k !== '') t[k] = v;
      return true;
    },
    has(t, key) {
      if (typeof key === 'symbol') return false;
      return Object.hasOwn(t, key);
    },
    deleteProperty(t, key) {
      if (typeof key !== 'symbol') delete t[key];
      return true;
    },
    defineProperty(t, key, desc) {
      if ('get' in desc || 'set' in desc) {
        throw codedError('ERR_INVALID_OBJECT_DEFINE_PROPERTY', `'process.env' does not accept an accessor(getter/setter) descriptor`);
      }
      if (!desc.configurable || !desc.writable || !desc.enumerable) {
        throw codedError('ERR_INVALID_OBJECT_DEFINE_PROPERTY', `'process.env' only accepts a configurable, writable, and enumerable data descriptor`);
      }
      if (!('value' in desc)) {
        throw codedError('ERR_INVALID_OBJECT_DEFINE_PROPERTY', `'process.env' does not accept a descriptor without a value`);
      }
      t[`${key}`] = `${desc.value}`;
      return true;
    },
    ownKeys(t) { return Reflect.ownKeys(t).filter((k) => typeof k === 'string'); },
    getOwnPropertyDescriptor(t, key) {
      if (typeof key === 'symbol' || !Object.hasOwn(t, key)) return undefined;
      return { value: t[key], writable: true, enumerable: true, configurable: true };
    },
  });
}

module.exports = { envProxy };
