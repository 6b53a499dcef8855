'use strict';
// vm: scripts run in the one context of this isolate (a new context per
// vm.createContext is not available from the embedding); this is not a
// security boundary, exactly as Node's documentation says of its vm.
const P = require('./internal/primordials.js');
class Script {
  constructor(code, options = {}) {
    this.code = `${code}`;
    this.filename = typeof options === 'string' ? options : options.filename || 'evalmachine.<anonymous>';
  }
  runInThisContext() { return P.indirectEval(`${this.code}\n//# sourceURL=${this.filename}`); }
  runInContext(ctx) { return runInContext(this.code, ctx); }
  runInNewContext(ctx) { return runInContext(this.code, ctx || {}); }
  createCachedData() { return require('./buffer.js').Buffer.alloc(0); }
}
function runInContext(code, ctx) {
  const keys = Object.keys(ctx || {});
  const fn = P.indirectEval(`(function(__ctx) { with (__ctx) { return eval(${JSON.stringify(`${code}`)}); } })`);
  void keys;
  return fn(ctx || {});
}
module.exports = {
  Script,
  createContext: (o = {}) => o,
  isContext: (o) => o !== null && typeof o === 'object',
  runInThisContext: (code, opts) => new Script(code, opts).runInThisContext(),
  runInContext: (code, ctx) => runInContext(code, ctx),
  runInNewContext: (code, ctx) => runInContext(code, ctx || {}),
  compileFunction: (code, params = []) => P.indirectEval(`(function(${params.join(',')}) {\n${code}\n})`),
  measureMemory: () => Promise.resolve({ total: { jsMemoryEstimate: 0, jsMemoryRange: [0, 0] } }),
  constants: { USE_MAIN_CONTEXT_DEFAULT_LOADER: Symbol('vm_dynamic_import_main_context_default'), DONT_CONTEXTIFY: Symbol('vm_context_no_contextify') },
};
