'use strict';
// assert: the npm polyfill (Node's assert of an earlier release) with
// what it lacks of Node 22's: CallTracker.
const assert = require('assert/');
const P = require('./internal/primordials.js');
const { codedError } = require('./internal/errors.js');

// Node's default tracked function: nameless, so reports say "calls".
const noop = Function.prototype;

// CallCheck counts the calls of one function made by CallTracker.calls.
class CallCheck {
  #expected;
  #name;
  #stack;
  #calls = [];

  constructor(expected, name, stack) {
    this.#expected = expected;
    this.#name = name;
    this.#stack = stack;
  }

  track(thisArg, args) {
    P.ArrayPrototypePush(this.#calls, P.ObjectFreeze({ thisArg, arguments: P.ObjectFreeze(P.ArrayPrototypeSlice(args)) }));
  }

  reset() { this.#calls = []; }

  calls() { return P.ObjectFreeze(P.ArrayPrototypeSlice(this.#calls)); }

  report() {
    const n = this.#calls.length;
    if (n === this.#expected) return undefined;
    return {
      message: `Expected the ${this.#name} function to be executed ${this.#expected} time(s) but was executed ${n} time(s).`,
      actual: n, expected: this.#expected, operator: this.#name, stack: this.#stack,
    };
  }
}

/** CallTracker checks that functions are called an expected number of times (deprecated in Node, still there). */
class CallTracker {
  #checks = new Set();
  #tracked = new WeakMap();

  #check(tracked) {
    const c = (typeof tracked === 'function' || (typeof tracked === 'object' && tracked !== null)) ? this.#tracked.get(tracked) : undefined;
    if (c === undefined) throw codedError('ERR_INVALID_ARG_VALUE', 'tracked', tracked, 'is not a tracked function');
    return c;
  }

  calls(fn, expected = 1) {
    if (process._exiting) throw codedError('ERR_UNAVAILABLE_DURING_EXIT');
    if (typeof fn === 'number') {
      expected = fn;
      fn = noop;
    } else if (fn === undefined) {
      fn = noop;
    }
    if (typeof expected !== 'number') throw codedError('ERR_INVALID_ARG_TYPE', 'expected', 'of type number', expected);
    if (!Number.isInteger(expected)) throw codedError('ERR_OUT_OF_RANGE', 'expected', 'an integer', expected);
    if (expected < 1 || expected > 4294967295) throw codedError('ERR_OUT_OF_RANGE', 'expected', '>= 1 && <= 4294967295', expected);
    const check = new CallCheck(expected, fn.name || 'calls', new Error());
    const tracked = new Proxy(fn, {
      __proto__: null,
      apply(target, thisArg, args) {
        check.track(thisArg, args);
        return P.ReflectApply(target, thisArg, args);
      },
    });
    this.#checks.add(check);
    this.#tracked.set(tracked, check);
    return tracked;
  }

  getCalls(tracked) { return this.#check(tracked).calls(); }

  reset(tracked) {
    if (tracked === undefined) {
      for (const c of this.#checks) c.reset();
      return;
    }
    this.#check(tracked).reset();
  }

  report() {
    const out = [];
    for (const c of this.#checks) {
      const r = c.report();
      if (r !== undefined) P.ArrayPrototypePush(out, r);
    }
    return out;
  }

  verify() {
    const errors = this.report();
    if (errors.length === 0) return;
    const message = errors.length === 1 ? errors[0].message : 'Functions were not called the expected number of times';
    const err = new assert.AssertionError({ message });
    // Node's shape: no actual/expected/operator, one numbered set of
    // fields per function.
    err.actual = undefined;
    err.expected = undefined;
    err.operator = undefined;
    errors.forEach((e, i) => {
      err[`message ${i}`] = e.message;
      err[`actual ${i}`] = e.actual;
      err[`expected ${i}`] = e.expected;
      err[`operator ${i}`] = e.operator;
      err[`stack trace ${i}`] = e.stack;
    });
    throw err;
  }
}

const Deprecated = require('./util.js').deprecate(CallTracker, 'assert.CallTracker is deprecated.', 'DEP0173');
assert.CallTracker = Deprecated;
assert.strict.CallTracker = Deprecated;

module.exports = assert;
