'use strict';
// module: CommonJS loading from the VM's filesystem. Resolution (Node's
// algorithm: node_modules walk, package.json main/exports/imports with
// conditions) and compilation (with V8's code cache, and esbuild for ES
// modules and TypeScript) happen in Go; this file keeps Node's object
// model (Module, require, require.cache, createRequire).
const { B } = require('./internal/bridge.js');
const builtins = require('./internal/builtins.js');
const { codedError } = require('./internal/errors.js');
const source = require('./internal/source.js');
const esm = require('./internal/module_esm.js');
const stackMap = require('./internal/module_sourcemap.js');
const path = require('./path.js');

function Module(id = '', parent) {
  this.id = id;
  this.path = path.dirname(id);
  this.exports = {};
  this.filename = null;
  this.loaded = false;
  this.children = [];
  this.paths = [];
  Object.defineProperty(this, 'parent', { value: parent, writable: true, configurable: true, enumerable: false });
  if (parent && parent.children) parent.children.push(this);
}

Module._cache = Object.create(null);
Module._pathCache = Object.create(null);
Module.builtinModules = builtins.builtinModules;
Module.isBuiltin = (name) => typeof name === 'string' && builtins.has(name);
Module.wrapper = ['(function (exports, require, module, __filename, __dirname) { ', '\n});'];
Module.wrap = (script) => Module.wrapper[0] + script + Module.wrapper[1];
// _initPaths recomputes globalPaths from HOME, NODE_PATH and the node
// binary's prefix, as node does at start (programs call it again after
// changing NODE_PATH).
Module._initPaths = function _initPaths() {
  const { process } = require('./process.js');
  const home = process.env.HOME;
  const nodePath = process.env.NODE_PATH;
  let paths = [path.resolve(process.execPath, '..', '..', 'lib', 'node')];
  if (home) paths.unshift(path.resolve(home, '.node_modules'), path.resolve(home, '.node_libraries'));
  if (nodePath) paths = nodePath.split(path.delimiter).filter(Boolean).concat(paths);
  Module.globalPaths = paths.slice();
};
Module.globalPaths = ['/home/user/.node_modules', '/home/user/.node_libraries', '/usr/lib/node'];

// _resolveLookupPaths is where a request is looked for: null for a
// builtin, the parent's directory (or '.') for a relative request, else
// the parent's node_modules chain then the global paths.
Module._resolveLookupPaths = function _resolveLookupPaths(request, parent) {
  if (builtins.has(request)) return null;
  const relative = request === '.' || request === '..' || request.startsWith('./') || request.startsWith('../');
  if (!relative) {
    const paths = parent && parent.paths && parent.paths.length ? [...parent.paths, ...Module.globalPaths] : Module.globalPaths.slice();
    return paths.length > 0 ? paths : null;
  }
  if (!parent || !parent.id || !parent.filename) return ['.'];
  return [path.dirname(parent.filename)];
};

// _stat is 0 for a file, 1 for a directory and a negative errno for
// anything else, as node's internal stat of the loader.
Module._stat = function _stat(filename) {
  const fs = require('./fs.js');
  try {
    return fs.statSync(filename).isDirectory() ? 1 : 0;
  } catch (e) {
    return typeof e.errno === 'number' && e.errno < 0 ? e.errno : -2;
  }
};
Module.syncBuiltinESMExports = () => {};
Module.findSourceMap = () => undefined;
Module.register = () => {};
Module.enableCompileCache = () => ({ status: 0 });
Module.getCompileCacheDir = () => undefined;
Module.constants = { compileCacheStatus: { FAILED: 0, ENABLED: 1, ALREADY_ENABLED: 2, DISABLED: 3 } };
Module.Module = Module;

Module._nodeModulePaths = function _nodeModulePaths(from) {
  from = path.resolve(from);
  if (from === '/') return ['/node_modules'];
  const parts = from.split('/');
  const out = [];
  for (let i = parts.length; i > 0; i--) {
    if (parts[i - 1] === 'node_modules') continue;
    out.push(parts.slice(0, i).join('/') + '/node_modules');
  }
  out.push('/node_modules');
  return out;
};

function notFound(request, parent, e) {
  let msg = typeof e === 'string' && e.startsWith('MODULE_NOT_FOUND') ? '' : (typeof e === 'string' ? e : '');
  if (typeof e === 'string' && e.startsWith('ERR_')) {
    const i = e.indexOf(':');
    const code = e.slice(0, i);
    const err = new Error(e.slice(i + 1).trim());
    err.code = code;
    return err;
  }
  const stack = [];
  for (let m = parent; m; m = m.parent) if (m.filename || m.id) stack.push(m.filename || m.id);
  msg = `Cannot find module '${request}'`;
  if (stack.length) msg += `\nRequire stack:\n- ${stack.join('\n- ')}`;
  const err = new Error(msg);
  err.code = 'MODULE_NOT_FOUND';
  err.requireStack = stack;
  return err;
}

Module._resolveFilename = function _resolveFilename(request, parent, isMain, options) {
  if (typeof request !== 'string') throw codedError('ERR_INVALID_ARG_TYPE', 'id', 'of type string', request);
  if (request.startsWith('node:') || builtins.has(request)) {
    if (builtins.has(request)) return request;
  }
  let dirs;
  if (options && options.paths) dirs = options.paths.map((p) => path.resolve(p));
  else dirs = [parent && parent.filename ? path.dirname(parent.filename) : process.cwd()];
  let last;
  for (const dir of dirs) {
    try {
      return B.resolve(request, dir, 'require');
    } catch (e) {
      last = e;
    }
  }
  throw notFound(request, parent, last);
};


Module._load = function _load(request, parent, isMain) {
  if (builtins.has(request) && (request.startsWith('node:') || !Module._cache[request])) {
    return builtins.load(request);
  }
  const filename = Module._resolveFilename(request, parent, isMain);
  const cached = Module._cache[filename];
  if (cached !== undefined) {
    if (parent && parent.children && !parent.children.includes(cached)) parent.children.push(cached);
    // Known to the ES module loader: an ES module, or CommonJS that an
    // import linked and has not run yet.
    if (cached[esm.kRecord]) return esm.requireCached(cached, parent);
    return cached.exports;
  }
  if (builtins.has(filename)) return builtins.load(filename);
  const module = new Module(filename, parent);
  if (isMain) {
    process.mainModule = module;
    module.id = '.';
  }
  Module._cache[filename] = module;
  let threw = true;
  try {
    module.load(filename);
    threw = false;
  } finally {
    // A failed ES module stays: its error is thrown again to later
    // importers, as Node's loader does.
    if (threw && !esm.isESM(module)) {
      delete Module._cache[filename];
      if (parent && parent.children) {
        const i = parent.children.indexOf(module);
        if (i >= 0) parent.children.splice(i, 1);
      }
    }
  }
  return module.exports;
};

Module.prototype.load = function load(filename) {
  this.filename = filename;
  this.paths = Module._nodeModulePaths(path.dirname(filename));
  let ext = path.extname(filename);
  if (!Module._extensions[ext]) ext = '.js';
  Module._extensions[ext](this, filename);
  this.loaded = true;
};

Module.prototype.require = function require(id) {
  if (typeof id !== 'string') throw codedError('ERR_INVALID_ARG_TYPE', 'id', 'of type string', id);
  if (id === '') throw codedError('ERR_INVALID_ARG_VALUE', 'id', id, 'must be a non-empty string');
  return Module._load(id, this, false);
};

function makeRequire(module) {
  const req = function require(id) { return module.require(id); };
  req.resolve = function resolve(request, options) {
    if (builtins.has(request)) return request;
    return Module._resolveFilename(request, module, false, options);
  };
  req.resolve.paths = (request) => (builtins.has(request) ? null : Module._nodeModulePaths(module.filename ? path.dirname(module.filename) : process.cwd()));
  req.main = process.mainModule;
  req.extensions = Module._extensions;
  req.cache = Module._cache;
  return req;
}

function compileError(e) {
  if (typeof e === 'string' && e.startsWith('SyntaxError\u0000')) {
    const [, loc, msg, line] = e.split('\u0000');
    const err = new SyntaxError(msg);
    const m = /^(.*):(\d+):(\d+)$/.exec(loc);
    if (m && line !== undefined) {
      err.stack = `${m[1]}:${m[2]}\n${line}\n${' '.repeat(Math.max(0, +m[3]))}^\n\nSyntaxError: ${msg}`;
      Object.defineProperty(err, Symbol.for('secexec.sourceShown'), { value: true });
    }
    return err;
  }
  if (typeof e === 'string' && e.startsWith('ERR_')) {
    const i = e.indexOf(':');
    const code = e.slice(0, i);
    // Go names the addon; the words are errors.js's.
    if (code === 'ERR_DLOPEN_DISABLED') return codedError(code, e.slice(i + 1).trim());
    const err = new Error(e.slice(i + 1).trim());
    err.code = code;
    return err;
  }
  return require('./internal/errors.js').fromBridge(e, 'open');
}

// For the -e/-p/stdin path (internal/run_main.js).
Module._compileError = compileError;

function runCompiled(module, filename, fn) {
  const req = makeRequire(module);
  const dirname = path.dirname(filename);
  const args = [module.exports, req, module, filename, dirname];
  // Transformed CommonJS that uses import() gets the module loader's.
  if (fn.dynamicImport) {
    // "any": import() whose attributes the transform could not read.
    const imp = (specifier) => esm.dynamicImport(specifier, module);
    imp.any = (specifier) => esm.dynamicImport(specifier, module, true);
    args.push(undefined, imp);
  }
  return Reflect.apply(fn, module.exports, args);
}

// compileFile compiles a module file: CommonJS, or an ES module or
// TypeScript through the transform (fn.esm, fn.tla, fn.script, fn.source).
function compileFile(filename) {
  let fn;
  try {
    fn = B.compileModule(filename);
  } catch (e) {
    throw compileError(e);
  }
  noteTransformed(fn);
  return fn;
}

// noteTransformed records a transformed script: its original source for
// the line shown above an uncaught error, and its source map for stack
// traces.
function noteTransformed(fn) {
  if (typeof fn.script !== 'string') return;
  if (typeof fn.source === 'string') source.remember(fn.script, fn.source);
  if (fn.mapped) stackMap.add(fn.script);
}

Module._extensions = Object.create(null);
Module._extensions['.js'] = function loadJS(module, filename) {
  const fn = compileFile(filename);
  if (fn.esm) {
    if (module.id === '.' && process.mainModule === module) {
      // The program: Node runs it with the ES module loader, which has
      // no require.main.
      process.mainModule = undefined;
      esm.attach(module, 'esm', fn);
      esm.runMain(module, fn);
      return;
    }
    esm.loadRequired(module, fn, module.parent);
    return;
  }
  runCompiled(module, filename, fn);
};
for (const ext of ['.cjs', '.mjs', '.ts', '.mts', '.cts']) Module._extensions[ext] = Module._extensions['.js'];
Module._extensions['.json'] = function loadJSON(module, filename) {
  const text = require('./fs.js').readFileSync(filename, 'utf8');
  try {
    module.exports = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (err) {
    err.message = `${filename}: ${err.message}`;
    throw err;
  }
};
Module._extensions['.node'] = function loadNode(module, filename) {
  // As Node's: the addon goes through process.dlopen, which refuses it.
  return process.dlopen(module, filename);
};

Module.prototype._compile = function _compile(content, filename) {
  let fn;
  try {
    fn = B.compileFunction(content, filename);
  } catch (e) {
    throw compileError(e);
  }
  source.remember(filename, content);
  return runCompiled(this, filename, fn);
};

// _compileESM compiles ES module source given as a string (--input-type
// module); the returned function runs it as the program.
Module._compileESM = function _compileESM(content, filename, name, ts) {
  if (name === '[eval]') {
    // Node names evaluated module code [eval1].
    name = '[eval1]';
    filename = path.join(path.dirname(filename), name);
  }
  let fn;
  try {
    fn = B.compileESM(content, filename, !!ts);
  } catch (e) {
    throw compileError(e);
  }
  noteTransformed(fn);
  return function run(exports, require, module) {
    module.filename = filename;
    module.id = filename;
    module.loaded = false;
    esm.attach(module, 'esm', fn);
    esm.runMain(module, fn);
  };
};

Module.createRequire = function createRequire(filename) {
  if (filename && typeof filename === 'object' && filename.href) filename = require('./url.js').fileURLToPath(filename);
  else if (typeof filename === 'string' && filename.startsWith('file:')) filename = require('./url.js').fileURLToPath(filename);
  if (typeof filename !== 'string' || !filename.startsWith('/')) {
    throw codedError('ERR_INVALID_ARG_VALUE', 'filename', filename, 'must be a file URL object, file URL string, or absolute path string');
  }
  const m = new Module(filename, null);
  m.filename = filename;
  m.paths = Module._nodeModulePaths(path.dirname(filename));
  return makeRequire(m);
};

Module.runMain = function runMain(file) {
  const main = path.resolve(file);
  let filename;
  try {
    filename = B.resolve(main, '/', 'main');
  } catch (e) {
    throw notFound(main, null, e);
  }
  Module._load(filename, null, true);
};

esm.init({ Module, compileFile, runCompiled, makeRequire });

module.exports = Module;
