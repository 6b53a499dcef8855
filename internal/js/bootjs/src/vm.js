'use strict';
// vm: scripts run in the one context of this isolate (a new context per
// vm.createContext is not available from the embedding); this is not a
// security boundary, exactly as Node's documentation says of its vm.
const P = require('./internal/primordials.js');
const { codedError } = require('./internal/errors.js');

// The argument checks are Node's (lib/vm.js and its validators).
function validateObject(v, name, allowArray = false) {
  if (v === null || typeof v !== 'object' || (!allowArray && Array.isArray(v))) {
    throw codedError('ERR_INVALID_ARG_TYPE', name, 'of type object', v);
  }
}
function validateInt(v, name, min, max) {
  if (typeof v !== 'number') throw codedError('ERR_INVALID_ARG_TYPE', name, 'of type number', v);
  if (!Number.isInteger(v)) throw codedError('ERR_OUT_OF_RANGE', name, 'an integer', v);
  if (v < min || v > max) throw codedError('ERR_OUT_OF_RANGE', name, `>= ${min} && <= ${max}`, v);
}
function validateBoolean(v, name) {
  if (typeof v !== 'boolean') throw codedError('ERR_INVALID_ARG_TYPE', name, 'of type boolean', v);
}
function validateRunOptions(options = {}) {
  validateObject(options, 'options');
  if (options.timeout !== undefined) validateInt(options.timeout, 'options.timeout', 1, 4294967295);
  const { displayErrors = true, breakOnSigint = false } = options;
  validateBoolean(displayErrors, 'options.displayErrors');
  validateBoolean(breakOnSigint, 'options.breakOnSigint');
}

// contexts are the objects createContext made contexts (isContext).
const contexts = new P.WeakMapCtor();
function isContext(object) {
  validateObject(object, 'object', true);
  return P.WeakMapPrototypeGet(contexts, object) === true;
}
function validateContext(ctx) {
  if (!isContext(ctx)) throw codedError('ERR_INVALID_ARG_TYPE', 'contextifiedObject', 'an instance of vm.Context', ctx);
}
function createContext(contextObject = {}, options = {}) {
  if (isContext(contextObject)) return contextObject;
  validateObject(options, 'options');
  P.WeakMapPrototypeSet(contexts, contextObject, true);
  return contextObject;
}

class Script {
  constructor(code, options = {}) {
    this.code = `${code}`;
    if (typeof options === 'string') options = { filename: options };
    else validateObject(options, 'options');
    const { filename = 'evalmachine.<anonymous>', lineOffset = 0, columnOffset = 0, cachedData, produceCachedData = false } = options;
    if (typeof filename !== 'string') throw codedError('ERR_INVALID_ARG_TYPE', 'options.filename', 'of type string', filename);
    validateInt(lineOffset, 'options.lineOffset', -(2 ** 31), 2 ** 31 - 1);
    validateInt(columnOffset, 'options.columnOffset', -(2 ** 31), 2 ** 31 - 1);
    if (cachedData !== undefined && !ArrayBuffer.isView(cachedData)) {
      throw codedError('ERR_INVALID_ARG_TYPE', 'options.cachedData', ['Buffer', 'TypedArray', 'DataView'], cachedData);
    }
    validateBoolean(produceCachedData, 'options.produceCachedData');
    this.filename = filename;
  }
  runInThisContext(options) {
    validateRunOptions(options);
    return P.indirectEval(`${this.code}\n//# sourceURL=${this.filename}`);
  }
  runInContext(ctx, options) {
    validateContext(ctx);
    validateRunOptions(options);
    return runInContext(this.code, ctx, this.filename);
  }
  runInNewContext(ctx, options) {
    const context = createContext(ctx);
    validateRunOptions(options);
    return runInContext(this.code, context, this.filename);
  }
  createCachedData() { return require('./buffer.js').Buffer.alloc(0); }
}
const fileOptions = (o) => (typeof o === 'string' ? { filename: o } : o);
// runOptions: the run options of a call that may pass a file name.
const runOptions = (o) => (typeof o === 'string' || o === undefined ? {} : o);
// runInContext evaluates code with the context object's properties in
// scope and as its `this`, so that `runInContext('this', ctx)` — how jest
// and others get a context's global — is the context object, and what
// they install there stays there instead of replacing this isolate's own
// globals (jest's test environment replaced `process` itself, and its
// exit code was lost: a failing run exited 0).
// Names the context object lacks resolve to this isolate's globals (the
// builtins), except names no global has either: those are the context's,
// so that an assignment to a new name lands on it, as in Node, instead of
// on this isolate's global object.
const scopes = new P.WeakMapCtor();
const ProxyCtor = Proxy;
function scopeOf(target) {
  let scope = P.WeakMapPrototypeGet(scopes, target);
  if (scope === undefined) {
    scope = new ProxyCtor(target, {
      has(t, k) { return k in t || (typeof k === 'string' && !(k in globalThis)); },
    });
    P.WeakMapPrototypeSet(scopes, target, scope);
  }
  return scope;
}
function runInContext(code, ctx, filename = 'evalmachine.<anonymous>') {
  const target = ctx || {};
  // The sourceURL names the evaluated code in stack traces (jest shows
  // the test file's frames).
  const src = `${code}\n//# sourceURL=${filename}`;
  const fn = P.indirectEval(`(function(__ctx) { with (__ctx) { return eval(${JSON.stringify(src)}); } })`);
  return P.FunctionPrototypeCall(fn, target, scopeOf(target));
}
module.exports = {
  Script,
  createContext,
  isContext,
  runInThisContext: (code, opts) => new Script(code, fileOptions(opts)).runInThisContext(runOptions(opts)),
  runInContext(code, ctx, opts) {
    validateContext(ctx);
    return new Script(code, fileOptions(opts)).runInContext(ctx, runOptions(opts));
  },
  runInNewContext(code, ctx, opts) {
    const context = createContext(ctx);
    return new Script(code, fileOptions(opts)).runInContext(context, runOptions(opts));
  },
  compileFunction: (code, params = []) => P.indirectEval(`(function(${params.join(',')}) {\n${code}\n})`),
  measureMemory: () => Promise.resolve({ total: { jsMemoryEstimate: 0, jsMemoryRange: [0, 0] } }),
  constants: { USE_MAIN_CONTEXT_DEFAULT_LOADER: Symbol('vm_dynamic_import_main_context_default'), DONT_CONTEXTIFY: Symbol('vm_context_no_contextify') },
};
