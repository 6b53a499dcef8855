'use strict';
// Reporters of node:test: each turns report events into text as Node
// 22's built-in reporter of the same name prints it. Output is written
// from a later macrotask, as Node's reporters write through a stream,
// so a test's console output lands before the report of that test.
const process = require('node:process');

function inspect(v) { return require('node:util').inspect(v); }

function tapEscape(s) {
  return String(s).replace(/\\/g, '\\\\').replace(/#/g, '\\#').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t').replace(/\f/g, '\\f').replace(/\v/g, '\\v').replace(/\x08/g, '\\b');
}

// yamlValue writes key: value at indent as Node's TAP reporter does:
// strings on several lines as a |- block, other scalars as util.inspect
// shows them, objects key by key, null as ~ and undefined left out.
function yamlValue(out, indent, key, value, seen = new Set()) {
  if (value === undefined) return;
  if (value === null) { out.push(`${indent}${key}: ~`); return; }
  if (typeof value === 'string' && value.includes('\n')) {
    out.push(`${indent}${key}: |-`);
    for (const line of value.split('\n')) out.push(`${indent}  ${line}`);
    return;
  }
  if (typeof value === 'object' && !(value instanceof Date) && !(value instanceof RegExp)) {
    if (seen.has(value)) { out.push(`${indent}${key}: '[Circular]'`); return; }
    seen.add(value);
    out.push(`${indent}${key}:`);
    for (const k of Object.keys(value)) yamlValue(out, `${indent}  `, k, value[k], seen);
    seen.delete(value);
    return;
  }
  out.push(`${indent}${key}: ${inspect(value)}`);
}

function isErrorLike(e) {
  return e !== null && typeof e === 'object' && (e instanceof Error || (typeof e.message === 'string' && typeof e.stack === 'string'));
}

function stackFrames(e) {
  if (typeof e.stack !== 'string') return [];
  const frames = [];
  for (const line of e.stack.split('\n')) {
    const m = /^\s+at (.*)$/.exec(line);
    if (m) frames.push(m[1]);
  }
  return frames;
}

// errorFields lists the YAML lines of a failed test's details.
function errorFields(indent, data) {
  const out = [];
  const err = data.details.error;
  if (data.file !== undefined && data.line !== undefined) out.push(`${indent}location: '${data.file}:${data.line}:${data.column}'`);
  out.push(`${indent}failureType: '${err.failureType}'`);
  if (err.exitCode !== undefined) {
    out.push(`${indent}exitCode: ${err.exitCode === null ? '~' : err.exitCode}`);
    out.push(`${indent}signal: ${err.signal === null || err.signal === undefined ? '~' : `'${err.signal}'`}`);
  }
  const c = err.cause;
  // Anything with a string message shows as an error: its message, its
  // code and, for errors, the rest.
  if (c !== null && typeof c === 'object' && typeof c.message === 'string' && !isErrorLike(c)) {
    yamlValue(out, indent, 'error', c.message);
    out.push(`${indent}code: ${inspect(c.code === undefined ? 'ERR_TEST_FAILURE' : c.code)}`);
  } else if (isErrorLike(c)) {
    yamlValue(out, indent, 'error', String(c.message));
    out.push(`${indent}code: '${c.code === undefined ? 'ERR_TEST_FAILURE' : c.code}'`);
    if (c.name !== undefined && c.name !== 'Error') yamlValue(out, indent, 'name', String(c.name));
    if (c.name === 'AssertionError' || Object.prototype.hasOwnProperty.call(c, 'operator')) {
      yamlValue(out, indent, 'expected', c.expected);
      yamlValue(out, indent, 'actual', c.actual);
      yamlValue(out, indent, 'operator', c.operator);
    }
    if (!c.secexecTestFailure) {
      const frames = err.frames || stackFrames(c);
      if (frames.length > 0) {
        out.push(`${indent}stack: |-`);
        for (const f of frames) out.push(`${indent}  ${f}`);
      }
    }
  } else {
    yamlValue(out, indent, 'error', typeof c === 'string' ? c : (c === null || typeof c !== 'object' ? String(c) : inspect(c)));
    out.push(`${indent}code: 'ERR_TEST_FAILURE'`);
  }
  return out;
}

function directive(data) {
  if (data.skip !== undefined) return ` # SKIP${typeof data.skip === 'string' && data.skip !== '' ? ` ${tapEscape(data.skip)}` : ''}`;
  if (data.todo !== undefined) return ` # TODO${typeof data.todo === 'string' && data.todo !== '' ? ` ${tapEscape(data.todo)}` : ''}`;
  return '';
}

function tap() {
  let started = false;
  return (e) => {
    let s = started ? '' : 'TAP version 13\n';
    started = true;
    const d = e.data || {};
    const ind = '    '.repeat(Math.max(d.nesting || 0, 0));
    switch (e.type) {
      case 'test:start':
        return `${s}${ind}# Subtest: ${tapEscape(d.name)}\n`;
      case 'test:pass':
      case 'test:fail': {
        s += `${ind}${e.type === 'test:pass' ? 'ok' : 'not ok'} ${d.testNumber} - ${tapEscape(d.name)}${directive(d)}\n`;
        const lines = [`${ind}  ---`, `${ind}  duration_ms: ${d.details.duration_ms}`];
        if (d.details.type) lines.push(`${ind}  type: '${d.details.type}'`);
        if (d.details.error) lines.push(...errorFields(`${ind}  `, d));
        lines.push(`${ind}  ...`);
        return `${s}${lines.join('\n')}\n`;
      }
      case 'test:plan':
        return `${s}${ind}1..${d.count}\n`;
      case 'test:diagnostic':
      case 'test:stdout':
      case 'test:stderr':
        return `${s}${ind}# ${d.message}\n`;
      default:
        return s;
    }
  };
}

const sym = { pass: '\u2714 ', fail: '\u2716 ', skip: '\ufe63 ', suite: '\u25b6 ', info: '\u2139 ' };

function fmtError(c, indent) {
  let text;
  if (isErrorLike(c)) text = c.secexecTestFailure ? inspect(c.message) : inspect(c);
  else text = inspect(c);
  return text.split('\n').map((l) => `${indent}${l}`).join('\n');
}

function spec(color) {
  const paint = (code, s) => (color ? `\x1b[${code}m${s}\x1b[39m` : s);
  const failures = [];
  const open = []; // started tests not yet reported, outermost first
  return (e) => {
    const d = e.data || {};
    const ind = '  '.repeat(Math.max(d.nesting || 0, 0));
    let out = '';
    switch (e.type) {
      case 'test:start':
        // A test with subtests is announced before its first subtest.
        if (open.length > 0 && !open[open.length - 1].announced) {
          const p = open[open.length - 1];
          p.announced = true;
          out += `${'  '.repeat(Math.max(p.nesting, 0))}${sym.suite}${p.name}\n`;
        }
        open.push({ name: d.name, nesting: d.nesting, announced: false });
        return out;
      case 'test:pass':
      case 'test:fail': {
        const mine = open.pop();
        const hadSubtests = mine !== undefined && mine.announced;
        // A test that never started shows no duration.
        const cancelled = d.details.neverStarted === true;
        const dir = d.skip !== undefined ? ` # ${typeof d.skip === 'string' ? d.skip : 'SKIP'}` : (d.todo !== undefined ? ` # ${typeof d.todo === 'string' ? d.todo : 'TODO'}` : '');
        // Node colours the whole line, the duration in grey inside it.
        let code;
        let mark;
        if (d.skip !== undefined) { code = 90; mark = sym.skip; } else if (e.type === 'test:pass') { code = 32; mark = sym.pass; } else { code = 31; mark = sym.fail; }
        const dur = cancelled ? '' : ` ${paint(90, `(${d.details.duration_ms}ms)`)}`;
        out += `${ind}${paint(code, `${mark}${d.name}${dur}${dir}`)}\n`;
        if (e.type === 'test:fail' && d.details.error && d.details.error.failureType !== 'subtestsFailed') {
          out += `${hadSubtests ? '\n' : ''}${fmtError(d.details.error.cause, `${ind}  `)}\n\n`;
          failures.push({ d, dir, dur });
        }
        return out;
      }
      case 'test:diagnostic':
        return `${ind}${paint(34, `${sym.info}${d.message}`)}\n`;
      case 'test:stdout':
      case 'test:stderr':
        return `${d.message}\n`;
      case 'test:summary': {
        if (failures.length === 0) return '';
        const entries = failures.map((f) => {
          const loc = f.d.file ? `test at ${relative(f.d.file)}:${f.d.line}:${f.d.column}\n` : '';
          return `${loc}${paint(31, `${sym.fail}${f.d.name}${f.dur}${f.dir}`)}\n${fmtError(f.d.details.error.cause, '  ')}\n`;
        });
        return `\n${paint(31, `${sym.fail}failing tests:`)}\n\n${entries.join('\n')}`;
      }
      default:
        return '';
    }
  };
}

function relative(file) {
  const cwd = process.cwd();
  return file.startsWith(`${cwd}/`) ? file.slice(cwd.length + 1) : file;
}

function dot(color) {
  let col = 0;
  const failed = [];
  return (e) => {
    const d = e.data || {};
    let out = '';
    if (e.type === 'test:pass' || e.type === 'test:fail') {
      if (e.type === 'test:fail') failed.push(d);
      out = e.type === 'test:pass' ? (color ? '\x1b[32m.\x1b[39m' : '.') : (color ? '\x1b[31mX\x1b[39m' : 'X');
      if (++col >= 20) { out += '\n'; col = 0; }
      return out;
    }
    if (e.type === 'test:summary') {
      out = '\n';
      if (failed.length > 0) {
        out += `\n${color ? '\x1b[31m' : ''}Failed tests:${color ? '\x1b[39m' : ''}\n\n`;
        for (const f of failed) out += `${color ? '\x1b[31m' : ''}\u2716 ${f.name} (${f.details.duration_ms}ms)${color ? '\x1b[39m' : ''}\n${fmtError(f.details.error.cause, '  ')}\n`;
      }
      return out;
    }
    return '';
  };
}

// xmlEscape escapes as Node's JUnit reporter does, quotes first (so a
// quote comes out as &amp;quot;) and '>' left alone.
function xmlEscape(s) {
  return String(s).replace(/"/g, '&quot;').replace(/&/g, '&amp;').replace(/</g, '&lt;');
}

// junit writes Node's JUnit XML: the document opens with the first
// event, each top-level test is written when it is reported, and the
// summary closes it as comments.
function junit() {
  let opened = false;
  const stack = [{ children: [] }];
  const host = require('node:os').hostname();
  const render = (n, ind, lines) => {
    const d = n.d;
    const secs = String(d.details.duration_ms / 1000);
    const err = d.details.error;
    if (n.children.length > 0 || d.details.type === 'suite') {
      // tests counts the children, failures and skipped every test below.
      const below = [];
      const walk = (x) => { for (const c of x.children) { below.push(c); walk(c); } };
      walk(n);
      const failures = below.filter((c) => c.failed).length;
      const skipped = below.filter((c) => c.d.skip !== undefined || c.d.todo !== undefined).length;
      lines.push(`${ind}<testsuite name="${xmlEscape(d.name)}" time="${secs}" disabled="0" errors="0" tests="${n.children.length}" failures="${failures}" skipped="${skipped}" hostname="${xmlEscape(host)}">`);
      for (const c of n.children) render(c, `${ind}\t`, lines);
      lines.push(`${ind}</testsuite>`);
      return;
    }
    const msg = err ? failureMessage(err) : '';
    const head = `${ind}<testcase name="${xmlEscape(d.name)}" time="${secs}" classname="test"${err ? ` failure="${xmlEscape(msg)}"` : ''}`;
    const inner = [];
    if (d.skip !== undefined) inner.push(`${ind}\t<skipped type="skipped" message="${xmlEscape(d.skip === true ? 'true' : d.skip)}"/>`);
    if (d.todo !== undefined) inner.push(`${ind}\t<skipped type="todo" message="${xmlEscape(d.todo === true ? 'true' : d.todo)}"/>`);
    if (err) {
      inner.push(`${ind}\t<failure type="${err.failureType}" message="${xmlEscape(msg)}">`);
      inner.push(xmlEscape(inspect(err.cause)));
      inner.push(`${ind}\t</failure>`);
    }
    if (inner.length === 0) lines.push(`${head}/>`);
    else lines.push(`${head}>`, ...inner, `${ind}</testcase>`);
  };
  return (e) => {
    const d = e.data || {};
    let out = '';
    if (!opened) { opened = true; out += '<?xml version="1.0" encoding="utf-8"?>\n<testsuites>\n'; }
    if (e.type === 'test:start') { stack.push({ d, children: [] }); return out; }
    if (e.type === 'test:pass' || e.type === 'test:fail') {
      const node = stack.pop() || { children: [] };
      node.d = d;
      node.failed = e.type === 'test:fail';
      if (stack.length > 1) { stack[stack.length - 1].children.push(node); return out; }
      const lines = [];
      render(node, '\t', lines);
      return `${out}${lines.join('\n')}\n`;
    }
    if (e.type === 'test:diagnostic' && d.nesting === 0) return `${out}\t<!-- ${xmlEscape(d.message)} -->\n`;
    if (e.type === 'test:summary') return `${out}</testsuites>\n`;
    return out;
  };
}

// failureMessage is the message JUnit shows for a failure: the error's,
// or for a hook Node's own words.
function failureMessage(err) {
  if (err.failureType === 'hookFailed' && err.hook) return `failed running ${err.hook} hook`;
  const c = err.cause;
  if (c !== null && typeof c === 'object' && typeof c.message === 'string') return c.message;
  return typeof c === 'string' ? c : String(c);
}

// destination opens where a reporter writes: stdout, stderr or a file.
function destination(name) {
  if (name === undefined || name === 'stdout') return (s) => process.stdout.write(s);
  if (name === 'stderr') return (s) => process.stderr.write(s);
  const fs = require('node:fs');
  const fd = fs.openSync(name, 'w');
  return (s) => fs.writeSync(fd, s);
}

function make(name, isTTY) {
  switch (name) {
    case 'tap': return tap();
    case 'spec': return spec(isTTY);
    case 'dot': return dot(isTTY);
    case 'junit': return junit();
    default: {
      const e = new Error(`Cannot find module '${name}'`);
      e.code = 'MODULE_NOT_FOUND';
      throw e;
    }
  }
}

// create builds the reporters the options ask for (Node 22: spec on a
// terminal, tap otherwise); in a child of node --test the events go to
// the parent as lines of JSON instead.
function create(o) {
  if (o.isChild) return childChannel();
  const names = o.reporters.length > 0 ? o.reporters : [process.stdout.isTTY ? 'spec' : 'tap'];
  const outs = names.map((n, i) => {
    const dest = o.destinations[i] !== undefined ? o.destinations[i] : (names.length === 1 ? 'stdout' : undefined);
    const write = destination(dest);
    const isTTY = (dest === 'stdout' && process.stdout.isTTY) || (dest === 'stderr' && process.stderr.isTTY);
    if (!builtin.has(n)) return custom(n, write);
    return { fn: make(n, !!isTTY && !process.env.NO_COLOR && process.env.FORCE_COLOR !== '0'), write };
  });
  return sink(outs);
}

const builtin = new Set(['tap', 'spec', 'dot', 'junit']);

// custom loads a reporter module (a path or a package, from the working
// directory): an async generator function over the events, or a
// Transform stream in object mode, as Node accepts.
function custom(name, write) {
  const Module = require('node:module');
  const req = Module.createRequire(`${process.cwd()}/[reporter]`);
  let mod = req(name.startsWith('file://') ? decodeURIComponent(name.slice(7)) : name);
  if (mod && typeof mod === 'object' && mod.default !== undefined) mod = mod.default;
  const queue = [];
  let wake = null;
  let closed = false;
  const source = {
    [Symbol.asyncIterator]() {
      return {
        next() {
          if (queue.length > 0) return Promise.resolve({ value: queue.shift(), done: false });
          if (closed) return Promise.resolve({ value: undefined, done: true });
          return new Promise((resolve) => { wake = resolve; });
        },
        return() { closed = true; return Promise.resolve({ value: undefined, done: true }); },
      };
    },
  };
  const toText = (chunk) => (typeof chunk === 'string' || chunk instanceof Uint8Array ? chunk : String(chunk));
  let push;
  let close;
  if (typeof mod === 'function') {
    push = (e) => {
      if (wake) { const w = wake; wake = null; w({ value: e, done: false }); } else queue.push(e);
    };
    close = () => {
      closed = true;
      if (wake) { const w = wake; wake = null; w({ value: undefined, done: true }); }
    };
    (async () => {
      for await (const chunk of mod(source)) write(toText(chunk));
    })().catch((err) => { process.nextTick(() => { throw err; }); });
  } else if (mod && typeof mod.write === 'function') {
    mod.on('data', (chunk) => write(toText(chunk)));
    push = (e) => mod.write(e);
    close = () => mod.end();
  } else {
    const e = new TypeError(`Reporter ${name} is not a function or a stream`);
    e.code = 'ERR_INVALID_ARG_TYPE';
    throw e;
  }
  return { push, close };
}

// sink queues events and renders them a macrotask later, the lag of
// Node's reporter streams.
function sink(outs) {
  const queue = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    const evs = queue.splice(0);
    for (const o of outs) {
      if (o.push) { for (const e of evs) o.push(e); continue; }
      let s = '';
      for (const e of evs) s += o.fn(e);
      if (s !== '') o.write(s);
    }
  };
  return {
    event(e) {
      queue.push(e);
      if (!scheduled) { scheduled = true; require('node:timers').setImmediate(flush); }
    },
    end() {
      flush();
      for (const o of outs) if (o.close) o.close();
    },
  };
}

// Events a child of node --test sends its parent: one line each on
// stdout, behind a marker no test prints by chance.
const kMarker = '\u0000secexec:test:';

function childChannel() {
  return {
    event(e) {
      if (e.type === 'test:summary' || e.type === 'test:enqueue') return;
      if (e.type === 'test:diagnostic' && e.data.summary) return;
      if (e.type === 'test:plan' && e.data.nesting === 0) return;
      process.stdout.write(`${kMarker}${JSON.stringify(serialise(e), (k, v) => (typeof v === "bigint" ? `${v}n` : v))}\n`);
    },
    end() {},
  };
}

// serialise makes an event's error cross the process boundary: the
// fields the reporters show are copied, with the stack's frames.
function serialise(e) {
  const d = e.data && e.data.details;
  if (!d || !d.error) return e;
  const err = d.error;
  const c = err.cause;
  let cause;
  if (c !== null && typeof c === 'object' && typeof c.message === 'string' && !isErrorLike(c)) {
    cause = { object: true, message: c.message, code: c.code };
  } else if (isErrorLike(c)) {
    cause = { message: String(c.message), stack: String(c.stack), isError: true, inspected: inspect(c) };
    for (const k of ['code', 'name', 'secexecTestFailure']) if (c[k] !== undefined) cause[k] = c[k];
    if (c.name === 'AssertionError' || Object.prototype.hasOwnProperty.call(c, 'operator')) {
      cause.assertion = true;
      cause.expected = c.expected;
      cause.actual = c.actual;
      cause.operator = c.operator;
    }
  } else {
    cause = { plain: typeof c === 'string' ? c : (c === null || typeof c !== 'object' ? String(c) : inspect(c)) };
  }
  return { type: e.type, data: { ...e.data, details: { ...d, error: { failureType: err.failureType, hook: err.hook, exitCode: err.exitCode, signal: err.signal, cause } } } };
}

// revive turns a serialised error back into something the reporters
// show as they show the original.
function revive(e) {
  const d = e.data && e.data.details;
  if (!d || !d.error) return e;
  const c = d.error.cause;
  if (c.plain !== undefined) { d.error.cause = c.plain; return e; }
  if (c.object) { d.error.cause = { message: c.message, code: c.code }; return e; }
  const err = Object.create(Error.prototype);
  for (const k of ['message', 'stack', 'code', 'secexecTestFailure']) if (c[k] !== undefined) Object.defineProperty(err, k, { value: c[k], enumerable: false, writable: true, configurable: true });
  if (c.name !== undefined) Object.defineProperty(err, 'name', { value: c.name, enumerable: false, writable: true, configurable: true });
  if (c.assertion) {
    err.expected = c.expected;
    err.actual = c.actual;
    err.operator = c.operator;
  }
  err[require('node:util').inspect.custom] = () => c.inspected;
  d.error.cause = err;
  return e;
}

// reporters is node:test/reporters: each reporter as an async generator
// over an iterable of events.
function reporters() {
  const wrap = (name) => async function* reporter(source) {
    const fn = make(name, false);
    for await (const e of source) {
      const s = fn(e);
      if (s !== '') yield s;
    }
  };
  return { tap: wrap('tap'), spec: wrap('spec'), dot: wrap('dot'), junit: wrap('junit') };
}

module.exports = { reporters, create, sink, make, destination, kMarker, revive, tapEscape };
