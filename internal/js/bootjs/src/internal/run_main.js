'use strict';
// runMain runs what the command line asked for: -e/-p code, a file, or
// a script read from stdin.
const { B, takeBytes } = require('./bridge.js');
const { process } = require('../process.js');
const source = require('./source.js');
const P = require('./primordials.js');

function readStdinSync() {
  const chunks = [];
  let total = 0;
  for (;;) {
    let n;
    try {
      n = B.read(0, 256 * 1024, -1);
    } catch (e) {
      if (e === 'EBADF') break; // no stdin: an empty script, as in Node
      throw require('./errors.js').fromBridge(e, 'read');
    }
    if (n === 0) break;
    const c = takeBytes(n);
    chunks.push(c);
    total += n;
  }
  const all = new Uint8Array(total);
  let off = 0;
  for (const c of chunks) { all.set(c, off); off += c.length; }
  return require('./encoding.js').utf8Decode(all);
}

// addBuiltinGlobals makes each builtin module a global of -e/-p code
// (node -e 'fs.readFileSync(...)'), as Node does: loaded at first use,
// not enumerable, and replaced by a plain property when assigned.
function addBuiltinGlobals(req) {
  const g = globalThis;
  const { builtinModules } = require('./builtins.js');
  for (let i = 0; i < builtinModules.length; i++) {
    const name = builtinModules[i];
    if (name[0] === '_' || P.StringPrototypeIndexOf(name, '/') !== -1 || P.ObjectPrototypeHasOwnProperty(g, name)) continue;
    const setReal = (v) => {
      delete g[name];
      g[name] = v;
    };
    P.ObjectDefineProperty(g, name, {
      __proto__: null,
      get() {
        const lib = req(name);
        P.ObjectDefineProperty(g, name, { __proto__: null, get: () => lib, set: setReal, configurable: true, enumerable: false });
        return lib;
      },
      set: setReal,
      configurable: true,
      enumerable: false,
    });
  }
}

function evalScript(name, code, print, inputType) {
  const Module = require('../module.js');
  const cwd = process.cwd();
  const filename = `${cwd}/${name}`;
  const module = new Module(name, null);
  module.filename = filename;
  module.paths = Module._nodeModulePaths(cwd);
  module.loaded = true;
  const req = Module.createRequire(filename);
  if (name === '[eval]') addBuiltinGlobals(req);
  if (inputType === 'module' || inputType === 'module-typescript') {
    const fn = Module._compileESM(code, filename, name, inputType === 'module-typescript');
    fn.call(module.exports, module.exports, req, module, name, '.');
    return;
  }
  globalThis.module = module;
  globalThis.exports = module.exports;
  globalThis.require = req;
  globalThis.__filename = name;
  globalThis.__dirname = '.';
  source.remember(name, code);
  let src = code;
  // TypeScript, and import() (which V8 as v8go runs it cannot do natively)
  // go through the transform; plain code runs as it is.
  const kind = inputType === 'commonjs-typescript' ? 'ts-cjs' : (/\bimport\s*\(/.test(code) ? 'cjs' : null);
  if (kind !== null) {
    let t;
    try {
      t = P.JSONParse(B.transformScript(code, name, kind));
    } catch (e) {
      throw require('../module.js')._compileError(e);
    }
    src = t.code;
    if (t.mapped) require('./module_sourcemap.js').add(name);
    if (t.import) {
      const esm = require('./module_esm.js');
      P.ObjectDefineProperty(globalThis, '__secexec_import', {
        value: (specifier) => esm.dynamicImport(specifier, module), configurable: true, writable: true,
      });
    }
  }
  const result = P.indirectEval(`${src}\n//# sourceURL=${name}`);
  if (print) {
    const { inspect } = require('../util.js');
    process.stdout.write(typeof result === 'string' ? `${result}\n` : `${inspect(result)}\n`);
  }
}

function runMain(info) {
  const Module = require('../module.js');
  for (const r of info.preload || []) Module._load(r, null, false);
  switch (info.mode) {
    case 'eval':
      evalScript('[eval]', info.code, false, info.inputType);
      break;
    case 'print':
      evalScript('[eval]', info.code, true, info.inputType);
      break;
    case 'worker-eval':
      evalScript('[worker eval]', info.code, false, info.inputType);
      break;
    case 'stdin':
      if (info.repl) { require('../repl.js').start(); break; }
      evalScript('[stdin]', readStdinSync(), false, info.inputType);
      break;
    case 'file':
      Module.runMain(info.file);
      break;
    case 'test':
      require('./lazy.js').lazy('test_runner').main(process.argv.slice(1));
      break;
  }
}

module.exports = { runMain };
