'use strict';
// console, writing straight to the kernel's descriptors 1 and 2.
const { B } = require('./internal/bridge.js');

// util (Node's inspect and format) is loaded on first need: loading it
// costs more than most short programs run, and printing strings and
// numbers does not need it.
let utilModule;
function lazyUtil() { return utilModule || (utilModule = require('./util.js')); }
const util = {
  formatWithOptions: (...a) => lazyUtil().formatWithOptions(...a),
  format: (...a) => lazyUtil().format(...a),
  inspect: (...a) => lazyUtil().inspect(...a),
};

// format is util.format for the common case of primitive arguments, with
// the same output; anything else goes to util.
function format(args) {
  const n = args.length;
  if (n === 1 && typeof args[0] === 'string') return args[0];
  if (n > 1 && typeof args[0] === 'string' && args[0].includes('%')) return util.formatWithOptions({}, ...args);
  let out = '';
  for (let i = 0; i < n; i++) {
    const v = args[i];
    let s;
    switch (typeof v) {
      case 'string': s = v; break;
      case 'number': s = Object.is(v, -0) ? '-0' : `${v}`; break;
      case 'boolean': case 'undefined': s = `${v}`; break;
      case 'bigint': s = `${v}n`; break;
      default:
        if (v !== null) return util.formatWithOptions({}, ...args);
        s = 'null';
    }
    out = i === 0 ? s : `${out} ${s}`;
  }
  return out;
}

const kGroupIndent = Symbol('kGroupIndent');
let processModule;
const hookedStdio = (fd) => (processModule || (processModule = require('./process.js'))).hookedStdio(fd);

class Console {
  constructor(stdout, stderr, ignoreErrors) {
    if (stdout && typeof stdout.write !== 'function' && stdout.stdout) {
      ({ stdout, stderr } = stdout);
    }
    this._stdout = stdout;
    this._stderr = stderr || stdout;
    this[kGroupIndent] = '';
    this._counts = new Map();
    this._timers = new Map();
    for (const k of Object.getOwnPropertyNames(Console.prototype)) {
      if (k === 'constructor' || typeof this[k] !== 'function') continue;
      // Bound, yet named as the method (not 'bound log'), as node's are.
      this[k] = this[k].bind(this);
      Object.defineProperty(this[k], 'name', { value: k, configurable: true });
    }
  }
  _write(fd, s) {
    const indent = this[kGroupIndent];
    if (indent) s = indent + s.replace(/\n/g, `\n${indent}`);
    s += '\n';
    const stream = (fd === 1 ? this._stdout : this._stderr) || hookedStdio(fd);
    if (stream) {
      stream.write(s);
      return;
    }
    try { B.write(fd, s); } catch { /* closed pipe: console never throws */ }
  }
  log(...args) { this._write(1, format(args)); }
  info(...args) { this.log(...args); }
  debug(...args) { this.log(...args); }
  error(...args) { this._write(2, format(args)); }
  warn(...args) { this.error(...args); }
  dir(obj, options) { this._write(1, util.inspect(obj, { customInspect: false, ...options })); }
  dirxml(...args) { this.log(...args); }
  trace(...args) {
    const err = { name: 'Trace', message: util.format(...args) };
    Error.captureStackTrace(err, this.trace);
    this.error(err.stack);
  }
  assert(ok, ...args) {
    if (!ok) {
      args[0] = `Assertion failed${args.length === 0 ? '' : `: ${args[0]}`}`;
      this.warn(...args);
    }
  }
  count(label = 'default') {
    label = `${label}`;
    const n = (this._counts.get(label) || 0) + 1;
    this._counts.set(label, n);
    this.log(`${label}: ${n}`);
  }
  countReset(label = 'default') { this._counts.delete(`${label}`); }
  group(...args) {
    if (args.length > 0) this.log(...args);
    this[kGroupIndent] += '  ';
  }
  groupCollapsed(...args) { this.group(...args); }
  groupEnd() { this[kGroupIndent] = this[kGroupIndent].slice(0, -2); }
  time(label = 'default') { this._timers.set(`${label}`, performance.now()); }
  timeEnd(label = 'default') { this.timeLog(label); this._timers.delete(`${label}`); }
  timeLog(label = 'default', ...data) {
    const start = this._timers.get(`${label}`);
    if (start === undefined) {
      process.emitWarning(`No such label '${label}' for console.timeLog()`);
      return;
    }
    const ms = performance.now() - start;
    this.log(`${label}: ${ms < 1000 ? `${ms.toFixed(3)}ms` : `${(ms / 1000).toFixed(3)}s`}`, ...data);
  }
  table(data, props) {
    if (data === null || typeof data !== 'object') return this.log(data);
    const rows = Object.entries(data);
    const cols = props || [...new Set(rows.flatMap(([, v]) => (v && typeof v === 'object') ? Object.keys(v) : ['Values']))];
    const header = ['(index)', ...cols];
    const body = rows.map(([k, v]) => [k, ...cols.map((c) => {
      if (c === 'Values' && (v === null || typeof v !== 'object')) return util.inspect(v);
      return v && typeof v === 'object' && c in v ? util.inspect(v[c]) : '';
    })]);
    const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => r[i].length)) + 2);
    const pad = (s, w) => { const l = Math.floor((w - s.length) / 2); return ' '.repeat(l) + s + ' '.repeat(w - s.length - l); };
    const line = (l, m, r) => l + widths.map((w) => '─'.repeat(w)).join(m) + r;
    const out = [line('┌', '┬', '┐'), '│' + header.map((h, i) => pad(h, widths[i])).join('│') + '│', line('├', '┼', '┤'),
      ...body.map((r) => '│' + r.map((c, i) => pad(c, widths[i])).join('│') + '│'), line('└', '┴', '┘')];
    this.log(out.join('\n'));
  }
  // clear moves a terminal's cursor home and clears the screen below it,
  // as Node's console.clear; it does nothing when stdout is no terminal.
  clear() {
    const P = require('./process.js').process;
    const stdout = this._stdout || P.stdout;
    if (stdout && stdout.isTTY && P.env.TERM !== 'dumb') {
      stdout.write('\x1b[1;1H');
      stdout.write('\x1b[0J');
    }
  }
  profile() {}
  profileEnd() {}
  timeStamp() {}
}

const console = new Console(null, null);
console.Console = Console;
module.exports = console;
