'use strict';
// vm: scripts run in the one context of this isolate (a new context per
// vm.createContext is not available from the embedding); this is not a
// security boundary, exactly as Node's documentation says of its vm.
const P = require('./internal/primordials.js');
class Script {
  constructor(code, options = {}) {
    this.code = `${code}`;
    this.filename = typeof options === 'string' ? options : (options && options.filename) || 'evalmachine.<anonymous>';
  }
  runInThisContext() { return P.indirectEval(`${this.code}\n//# sourceURL=${this.filename}`); }
  runInContext(ctx) { return runInContext(this.code, ctx, this.filename); }
  runInNewContext(ctx) { return runInContext(this.code, ctx || {}, this.filename); }
  createCachedData() { return require('./buffer.js').Buffer.alloc(0); }
}
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
  createContext: (o = {}) => o,
  isContext: (o) => o !== null && typeof o === 'object',
  runInThisContext: (code, opts) => new Script(code, opts).runInThisContext(),
  runInContext: (code, ctx, opts) => new Script(code, opts).runInContext(ctx),
  runInNewContext: (code, ctx, opts) => new Script(code, opts).runInNewContext(ctx),
  compileFunction: (code, params = []) => P.indirectEval(`(function(${params.join(',')}) {\n${code}\n})`),
  measureMemory: () => Promise.resolve({ total: { jsMemoryEstimate: 0, jsMemoryRange: [0, 0] } }),
  constants: { USE_MAIN_CONTEXT_DEFAULT_LOADER: Symbol('vm_dynamic_import_main_context_default'), DONT_CONTEXTIFY: Symbol('vm_context_no_contextify') },
};
