'use strict';
// The ES module loader. V8 as v8go exposes it has no module API, so an ES
// module is transformed in Go (modules.Transform) into a wrapper function
// whose import statements are hoisted above a link point:
//
//   - a module without top-level await is a generator: its first step
//     defines its exports (getters over its own bindings) and requires its
//     imports, then yields; the loader evaluates the imports and resumes it
//     to run the body;
//   - a module with top-level await is an async function that, at the link
//     point, asks the loader to evaluate its imports and awaits them only
//     when one of them is still evaluating asynchronously.
//
// The loader keeps a record per module and follows Node's order: a graph
// is linked first (synchronous modules), then evaluated depth-first,
// post-order; a module waits for imports that evaluate asynchronously, and
// its own evaluation is then asynchronous; import cycles do not wait on
// themselves. Importers hold each module's namespace object from the
// start: a module namespace whose getters read the module's live
// bindings, or, for CommonJS, one filled in when the module has run.
const { B } = require('./bridge.js');
const builtins = require('./builtins.js');
const { codedError } = require('./errors.js');
const P = require('./primordials.js');
const path = require('../path.js');

const kESM = Symbol.for('secexec.esm');
const kStar = Symbol.for('secexec.star');
const kRecord = Symbol('secexec.moduleRecord');

const ObjectCreate = Object.create;
const ObjectGetOwnPropertyNames = Object.getOwnPropertyNames;
const PromiseCtor = Promise;
const PromiseAll = Promise.all.bind(Promise);
const PromisePrototypeThen = P.uncurry(Promise.prototype.then);
const noop = () => {};

// host is what module.js lends: Module, and how it compiles and runs
// CommonJS (set by init, module.js requiring this file).
let host;
function init(h) { host = h; }

// Records: status goes new → linking → linked → evaluating → evaluated,
// or errored (error kept, thrown again to every later importer).
class Record {
  constructor(module, kind, fn) {
    this.module = module;
    this.kind = kind; // 'esm' | 'cjs' | 'json'
    this.fn = fn;
    this.tla = !!(fn && fn.tla);
    this.status = 'new';
    this.phase = 'link'; // 'body' once the module's imports are evaluated
    this.deps = [];
    this.gen = null;
    this.promise = undefined; // set while an asynchronous evaluation is pending
    this.error = undefined;
    this.stars = [];
    this.ns = namespace(this);
  }
}

const owners = new P.WeakMapCtor(); // namespace object → record

function namespace(rec) {
  const ns = ObjectCreate(null);
  P.ObjectDefineProperty(ns, Symbol.toStringTag, { value: 'Module' });
  P.ObjectDefineProperty(ns, kESM, { value: true });
  // `export * from` this module: names it gains later (a CommonJS module
  // or one with top-level await, imported before it ran) reach the
  // re-exporting module too.
  P.ObjectDefineProperty(ns, kStar, {
    value: (target, second) => { P.ArrayPrototypePush(rec.stars, target, second); },
  });
  P.WeakMapPrototypeSet(owners, ns, rec);
  return ns;
}

function copyMissing(to, from) {
  if (to === null || (typeof to !== 'object' && typeof to !== 'function')) return false;
  let added = false;
  const keys = ObjectGetOwnPropertyNames(from);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    if (key === 'default' || P.ObjectPrototypeHasOwnProperty(to, key)) continue;
    const d = P.ObjectGetOwnPropertyDescriptor(from, key);
    if (!d || !d.enumerable) continue;
    try {
      P.ObjectDefineProperty(to, key, { get: () => from[key], enumerable: true, configurable: true });
      added = true;
    } catch { /* a frozen target */ }
  }
  return added;
}

// spread passes names a namespace gained on to the modules that
// `export *` it.
function spread(rec, depth = 0) {
  if (depth > 64) return;
  const s = rec.stars;
  for (let i = 0; i < s.length; i += 2) {
    copyMissing(s[i], rec.ns);
    const second = s[i + 1];
    if (second && copyMissing(second, rec.ns)) {
      const owner = P.WeakMapPrototypeGet(owners, second);
      if (owner) spread(owner, depth + 1);
    }
  }
}

function attach(module, kind, fn) {
  const rec = new Record(module, kind, fn);
  P.ObjectDefineProperty(module, kRecord, { value: rec, configurable: true });
  if (kind === 'esm') {
    // The transformed code sets module.exports to its exports object once:
    // its getters go onto the namespace importers already hold.
    P.ObjectDefineProperty(module, 'exports', {
      configurable: true,
      enumerable: true,
      get() { return rec.ns; },
      set(v) {
        if (v === rec.ns || v === null || (typeof v !== 'object' && typeof v !== 'function')) return;
        const keys = ObjectGetOwnPropertyNames(v);
        for (let i = 0; i < keys.length; i++) {
          const d = P.ObjectGetOwnPropertyDescriptor(v, keys[i]);
          d.configurable = true;
          P.ObjectDefineProperty(rec.ns, keys[i], d);
        }
        spread(rec);
      },
    });
  }
  return rec;
}

// fillCJS makes the namespace of a CommonJS (or JSON) module that has
// run: default is module.exports, and (CommonJS) its own enumerable
// properties are named exports.
function fillCJS(rec) {
  const exp = rec.module.exports;
  const ns = rec.ns;
  P.ObjectDefineProperty(ns, 'default', { value: exp, enumerable: true, writable: true, configurable: true });
  // A JSON module has only a default export.
  if (rec.kind !== 'json' && exp !== null && (typeof exp === 'object' || typeof exp === 'function')) {
    let keys;
    try { keys = P.ObjectKeys(exp); } catch { keys = []; }
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i];
      if (k === 'default' || k === '__esModule' || P.ObjectPrototypeHasOwnProperty(ns, k)) continue;
      P.ObjectDefineProperty(ns, k, { get: () => exp[k], enumerable: true, configurable: true });
    }
  }
  spread(rec);
}

function recordOf(module) {
  const rec = module[kRecord];
  if (rec) return rec;
  // A module that require() loaded: CommonJS, run or running.
  const r = attach(module, 'cjs', null);
  r.status = module.loaded ? 'evaluated' : 'evaluating';
  fillCJS(r);
  return r;
}

function compileRecord(module, filename) {
  if (path.extname(filename) === '.json') return attach(module, 'json', null);
  const fn = host.compileFile(filename);
  return attach(module, fn.esm ? 'esm' : 'cjs', fn);
}

// --- resolution ---

const builtinNamespaces = new P.MapCtor();

function builtinNamespace(name) {
  const exp = builtins.load(name);
  let ns = P.MapPrototypeGet(builtinNamespaces, name);
  if (ns) return ns;
  ns = ObjectCreate(null);
  P.ObjectDefineProperty(ns, Symbol.toStringTag, { value: 'Module' });
  P.ObjectDefineProperty(ns, kESM, { value: true });
  if (exp !== null && (typeof exp === 'object' || typeof exp === 'function')) {
    const keys = P.ObjectKeys(exp);
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i];
      if (k !== 'default') P.ObjectDefineProperty(ns, k, { get: () => exp[k], enumerable: true });
    }
  }
  P.ObjectDefineProperty(ns, 'default', { value: exp, enumerable: true, writable: true });
  P.MapPrototypeSet(builtinNamespaces, name, ns);
  return ns;
}

function importNotFound(specifier, referrer, e) {
  if (typeof e === 'string' && P.StringPrototypeStartsWith(e, 'ERR_')) {
    const i = P.StringPrototypeIndexOf(e, ':');
    const err = new P.Error(P.StringPrototypeSlice(e, i + 1).trim());
    err.code = P.StringPrototypeSlice(e, 0, i);
    return err;
  }
  if (typeof e !== 'string') return e;
  const from = referrer && referrer.filename ? referrer.filename : `${process.cwd()}/`;
  let msg;
  if (specifier[0] === '/' || specifier[0] === '.' || P.StringPrototypeStartsWith(specifier, 'file:')) {
    let where = specifier;
    if (P.StringPrototypeStartsWith(specifier, 'file:')) {
      try { where = require('../url.js').fileURLToPath(specifier); } catch { /* as written */ }
    } else {
      where = path.resolve(path.dirname(from), specifier);
    }
    msg = `Cannot find module '${where}' imported from ${from}`;
  } else {
    const parts = P.StringPrototypeSplit(specifier, '/');
    const name = specifier[0] === '@' && parts.length > 1 ? `${parts[0]}/${parts[1]}` : parts[0];
    msg = `Cannot find package '${name}' imported from ${from}`;
  }
  return codedError('ERR_MODULE_NOT_FOUND', msg);
}

const schemeRE = /^([a-zA-Z][a-zA-Z\d+\-.]*):/;
const pathLikeRE = /^(\/|\.\.?(\/|$)|file:)/;

// target resolves an import: a builtin's name, or the module's record
// (created and compiled if new). The transform appended the import's
// type attribute to the specifier after a NUL (modules.AttrSep), which
// no path or URL holds; it is checked as Node 22 does unless lenient
// (import() in code compiled at run time, whose attributes V8 does not
// hand over).
function target(specifier, referrer, lenient) {
  if (typeof specifier !== 'string') specifier = `${specifier}`;
  let type;
  const sep = P.StringPrototypeIndexOf(specifier, '\u0000');
  if (sep >= 0) {
    type = P.StringPrototypeSlice(specifier, sep + 1) || undefined;
    specifier = P.StringPrototypeSlice(specifier, 0, sep);
  }
  const t = resolveTarget(specifier, referrer);
  if (!lenient || sep >= 0) checkType(t, type);
  return t;
}

// checkType is Node 22's check of an import's type attribute against the
// module it names: a JSON module needs type json, every other takes none.
function checkType(t, type) {
  let url;
  let json = false;
  if (t.builtin) {
    url = P.StringPrototypeStartsWith(t.builtin, 'node:') ? t.builtin : `node:${t.builtin}`;
  } else {
    const f = t.record.module.filename;
    json = path.extname(f) === '.json';
    url = require('../url.js').pathToFileURL(f).href;
  }
  if (type !== undefined && type[0] === '\u0001') {
    // An attribute other than type (modules.attrMark): Node supports none.
    const kv = P.StringPrototypeSplit(type, '\u0001');
    throw codedError('ERR_IMPORT_ATTRIBUTE_UNSUPPORTED', kv[1], kv[2]);
  }
  if (type === (json ? 'json' : undefined)) return;
  if (type === undefined) throw codedError('ERR_IMPORT_ATTRIBUTE_MISSING', url, 'json');
  if (type !== 'json') throw codedError('ERR_IMPORT_ATTRIBUTE_UNSUPPORTED', 'type', type);
  throw codedError('ERR_IMPORT_ATTRIBUTE_TYPE_INCOMPATIBLE', url, 'json');
}

function resolveTarget(specifier, referrer) {
  if (builtins.has(specifier)) return { builtin: specifier };
  if (P.StringPrototypeStartsWith(specifier, 'node:')) return { builtin: specifier }; // unknown: load throws
  const scheme = schemeRE.exec(specifier);
  if (scheme && scheme[1] !== 'file') {
    const err = codedError('ERR_UNSUPPORTED_ESM_URL_SCHEME', `${scheme[1]}:`);
    throw err;
  }
  const dir = referrer && referrer.filename ? path.dirname(referrer.filename) : process.cwd();
  let filename;
  try {
    filename = B.resolve(specifier, dir, 'import');
  } catch (e) {
    throw importNotFound(specifier, referrer, e);
  }
  const Module = host.Module;
  let m = Module._cache[filename];
  if (m !== undefined) {
    if (referrer && referrer.children && !referrer.children.includes(m)) referrer.children.push(m);
    return { record: recordOf(m) };
  }
  m = new Module(filename, referrer);
  m.filename = filename;
  m.paths = Module._nodeModulePaths(path.dirname(filename));
  Module._cache[filename] = m;
  try {
    return { record: compileRecord(m, filename) };
  } catch (e) {
    delete Module._cache[filename];
    if (referrer && referrer.children) {
      const i = referrer.children.indexOf(m);
      if (i >= 0) referrer.children.splice(i, 1);
    }
    throw e;
  }
}

// --- linking and evaluation ---

function importMeta(rec) {
  const filename = rec.module.filename;
  const meta = ObjectCreate(null);
  meta.dirname = path.dirname(filename);
  meta.filename = filename;
  meta.resolve = function resolve(specifier) {
    if (builtins.has(specifier)) return P.StringPrototypeStartsWith(specifier, 'node:') ? specifier : `node:${specifier}`;
    let f;
    specifier = `${specifier}`;
    try {
      f = B.resolve(specifier, path.dirname(filename), 'import');
    } catch (e) {
      const err = importNotFound(specifier, rec.module, e);
      // As Node's: a path or file URL resolves to the URL it names even
      // when nothing is there (only a package must be found).
      if (err && err.code === 'ERR_MODULE_NOT_FOUND' && pathLikeRE.test(specifier)) {
        return new (require('../url.js').URL)(specifier, rec.fn.script).href;
      }
      throw err;
    }
    return require('../url.js').pathToFileURL(f).href;
  };
  meta.url = rec.fn.script;
  return meta;
}

// importRequire is the require the transformed code calls for its
// imports: while linking, a static import (the module is linked and its
// namespace returned); afterwards, import() (a promise of the namespace,
// which the code's __toESM passes through). Its "any" property is
// import() whose attributes the transform could not read.
function importRequire(rec) {
  const req = function require(specifier) {
    if (rec.phase === 'link') {
      const t = target(specifier, rec.module);
      if (t.builtin) return builtins.load(t.builtin);
      link(t.record);
      P.ArrayPrototypePush(rec.deps, t.record);
      return t.record.ns;
    }
    return dynamicImport(specifier, rec.module);
  };
  req.any = (specifier) => dynamicImport(specifier, rec.module, true);
  return req;
}

function callWrapper(rec) {
  const m = rec.module;
  const filename = m.filename;
  return P.ReflectApply(rec.fn, undefined, [rec.ns, importRequire(rec), m, filename, path.dirname(filename),
    importMeta(rec), host.makeRequire(m), () => evaluateDeps(rec)]);
}

function fail(rec, e) {
  rec.status = 'errored';
  rec.error = e;
  rec.gen = null;
}

// link runs the linking step of a synchronous ES module (and, through its
// imports, of the graph below it). CommonJS and modules with top-level
// await link when they are evaluated.
function link(rec) {
  if (rec.status !== 'new') return;
  if (rec.kind !== 'esm' || rec.tla) {
    rec.status = 'linked';
    return;
  }
  rec.status = 'linking';
  try {
    rec.gen = callWrapper(rec);
    rec.gen.next();
  } catch (e) {
    fail(rec, e);
    throw e;
  }
  rec.status = 'linked';
}

// evaluate runs a linked module after its imports; it returns undefined
// when that is done, or a promise when the module (or an import) is
// asynchronous.
function evaluate(rec) {
  switch (rec.status) {
    case 'evaluated':
    case 'evaluating':
      return rec.promise;
    case 'errored':
      throw rec.error;
    case 'new':
      link(rec);
  }
  if (rec.kind !== 'esm') {
    evaluateCJS(rec);
    return undefined;
  }
  rec.status = 'evaluating';
  if (rec.tla) return pending(rec, callWrapper(rec));
  let deps;
  try {
    deps = evaluateDeps(rec);
  } catch (e) {
    fail(rec, e);
    throw e;
  }
  if (!deps) {
    runBody(rec);
    return undefined;
  }
  return pending(rec, PromisePrototypeThen(deps, () => runBody(rec)));
}

// evaluateDeps evaluates a module's imports in order; from then on its
// require() calls are import() calls.
function evaluateDeps(rec) {
  rec.phase = 'body';
  let waits;
  const deps = rec.deps;
  for (let i = 0; i < deps.length; i++) {
    const p = evaluate(deps[i]);
    if (p) {
      if (!waits) waits = [];
      P.ArrayPrototypePush(waits, p);
    }
  }
  return waits ? PromiseAll(waits) : undefined;
}

function runBody(rec) {
  try {
    rec.gen.next();
  } catch (e) {
    fail(rec, e);
    throw e;
  }
  rec.gen = null;
  rec.status = 'evaluated';
  rec.module.loaded = true;
}

// pending tracks an asynchronous evaluation. The record's promise is the
// runtime's own (marked handled); whoever waits on it handles failures.
function pending(rec, p) {
  rec.promise = PromisePrototypeThen(p, () => {
    rec.status = 'evaluated';
    rec.promise = undefined;
    rec.module.loaded = true;
  }, (e) => {
    fail(rec, e);
    throw e;
  });
  PromisePrototypeThen(rec.promise, undefined, noop);
  return rec.promise;
}

function evaluateCJS(rec) {
  const m = rec.module;
  rec.status = 'evaluating';
  try {
    if (rec.kind === 'json') host.Module._extensions['.json'](m, m.filename);
    else host.runCompiled(m, m.filename, rec.fn);
    m.loaded = true;
  } catch (e) {
    fail(rec, e);
    if (host.Module._cache[m.filename] === m) delete host.Module._cache[m.filename];
    throw e;
  }
  rec.fn = null;
  rec.status = 'evaluated';
  fillCJS(rec);
}

// dynamicImport is import(): a promise of the namespace once the module
// and its imports have evaluated.
function dynamicImport(specifier, referrer, lenient) {
  const p = new PromiseCtor((resolve, reject) => {
    const t = target(specifier, referrer, lenient);
    if (t.builtin) {
      resolve(builtinNamespace(t.builtin));
      return;
    }
    const rec = t.record;
    link(rec);
    const e = evaluate(rec);
    if (e) PromisePrototypeThen(e, () => resolve(rec.ns), reject);
    else resolve(rec.ns);
  });
  P.ObjectDefineProperty(p, kESM, { value: true });
  return p;
}

// importFromScript is import() in code compiled at run time (eval, new
// Function, vm scripts), as V8 hands it over (dynimport_shim.cc): script
// is the name of the script whose code compiled it, a file path for
// CommonJS, a file: URL for an ES module; code of a script with no file
// resolves from the working directory, as Node's eval does. It always
// returns a promise: V8 takes whatever it returns for one.
function importFromScript(specifier, script) {
  try {
    let filename = null;
    if (typeof script === 'string') {
      if (P.StringPrototypeStartsWith(script, 'file://')) filename = require('../url.js').fileURLToPath(script);
      else if (P.StringPrototypeStartsWith(script, '/')) filename = script;
    }
    let referrer = null;
    if (filename !== null) referrer = host.Module._cache[filename] || { filename };
    return dynamicImport(specifier, referrer, true);
  } catch (e) {
    return new PromiseCtor((_, reject) => reject(e));
  }
}

// --- entry points from module.js ---

function graphIsAsync(rec, seen) {
  if (seen.has(rec)) return false;
  seen.add(rec);
  if (rec.kind !== 'esm') return false;
  if (rec.status === 'evaluated' || rec.status === 'evaluating') return rec.promise !== undefined;
  if (rec.tla) return true;
  for (let i = 0; i < rec.deps.length; i++) if (graphIsAsync(rec.deps[i], seen)) return true;
  return false;
}

function requireAsyncError(rec, parent) {
  let msg = 'require() cannot be used on an ESM graph with top-level await. Use import() instead. To see where the top-level await comes from, use --experimental-print-required-tla.';
  if (parent && parent.filename) msg += `\n  From ${parent.filename} `;
  msg += `\n  Requiring ${rec.module.filename} `;
  const err = new Error(msg);
  err.code = 'ERR_REQUIRE_ASYNC_MODULE';
  if (typeof err.stack === 'string') err.stack = err.stack.replace('Error', 'Error [ERR_REQUIRE_ASYNC_MODULE]');
  return err;
}

// requireESM is require() of an ES module (Node 22): it links and
// evaluates the module synchronously, unless its graph has top-level
// await (ERR_REQUIRE_ASYNC_MODULE, before anything runs).
function requireESM(rec, parent) {
  switch (rec.status) {
    case 'errored':
      throw rec.error;
    case 'evaluated':
    case 'evaluating':
      if (rec.promise) throw requireAsyncError(rec, parent);
      return rec.ns;
  }
  link(rec);
  if (graphIsAsync(rec, new Set())) throw requireAsyncError(rec, parent);
  const p = evaluate(rec);
  if (p) throw requireAsyncError(rec, parent);
  return rec.ns;
}

// loadRequired is Module.prototype.load's path for a file that compiled
// as an ES module.
function loadRequired(module, fn, parent) {
  const rec = attach(module, 'esm', fn);
  return requireESM(rec, parent);
}

// requireCached is require() of a module the ES module loader knows.
function requireCached(module, parent) {
  const rec = module[kRecord];
  if (rec.kind === 'esm') return requireESM(rec, parent);
  if (rec.status === 'errored') throw rec.error;
  if (rec.status === 'new' || rec.status === 'linked') evaluate(rec);
  return module.exports;
}

function isESM(module) {
  const rec = module[kRecord];
  return !!rec && rec.kind === 'esm';
}

// runMain runs an ES module as the program: its evaluation may be
// asynchronous. A rejection is an uncaught exception; a top-level await
// still pending when the loop runs dry exits with 13, as in Node.
function runMain(module, fn) {
  const rec = module[kRecord] || attach(module, 'esm', fn);
  link(rec);
  const p = evaluate(rec);
  if (!p) return;
  const { process: proc, fatal } = require('../process.js');
  let settled = false;
  const onExit = () => {
    if (settled || (proc.exitCode !== undefined && proc.exitCode !== null)) return;
    proc.exitCode = 13;
    warnUnsettled(rec, proc);
  };
  proc.on('exit', onExit);
  PromisePrototypeThen(p, () => {
    settled = true;
    proc.removeListener('exit', onExit);
  }, (e) => {
    settled = true;
    proc.removeListener('exit', onExit);
    fatal(e);
  });
}

// warnUnsettled names the module whose top-level await never settled:
// the deepest one still pending.
function warnUnsettled(rec, proc) {
  let r = rec;
  const seen = new Set();
  for (;;) {
    seen.add(r);
    let next;
    for (let i = 0; i < r.deps.length; i++) {
      const d = r.deps[i];
      if (d.kind === 'esm' && d.promise && !seen.has(d)) { next = d; break; }
    }
    if (!next) break;
    r = next;
  }
  if (!r.fn || !r.fn.tlaLine) return;
  let text = `Warning: Detected unsettled top-level await at ${r.fn.script}:${r.fn.tlaLine}\n`;
  const src = typeof r.fn.source === 'string' ? P.StringPrototypeSplit(r.fn.source, '\n')[r.fn.tlaLine - 1] : undefined;
  if (src !== undefined && src.length <= 200) text += `${src}\n${' '.repeat(r.fn.tlaCol | 0)}^\n`;
  require('../process.js').writeStderr(`${text}\n\n`);
  void proc;
}

module.exports = {
  init, kRecord, loadRequired, requireCached, runMain, dynamicImport, importFromScript, isESM, attach,
};
