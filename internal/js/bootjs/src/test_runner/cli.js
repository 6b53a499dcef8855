'use strict';
// node --test and node:test's run(): find the test files, run each in a
// child process (through child_process, so through the kernel), read the
// report events each child sends (test_report.js's child channel) and
// report them all as one run, as Node 22 does.
const process = require('node:process');
const report = require('./report.js');
const path = require('node:path');

const exts = ['js', 'cjs', 'mjs'];

// isTestFile applies Node 22's default patterns to a path relative to
// the directory searched.
function isTestFile(rel) {
  const parts = rel.split('/');
  const base = parts[parts.length - 1];
  const dot = base.lastIndexOf('.');
  if (dot < 0 || !exts.includes(base.slice(dot + 1))) return false;
  const stem = base.slice(0, dot);
  if (stem === 'test' || stem.startsWith('test-') || stem.endsWith('.test') || stem.endsWith('-test') || stem.endsWith('_test')) return true;
  return parts.slice(0, -1).includes('test');
}

function walk(fs, dir, rel, out, budget) {
  let names;
  try { names = fs.readdirSync(dir, { withFileTypes: true }); } catch { return; }
  for (const d of names) {
    if (budget.n-- <= 0) return;
    if (d.name === 'node_modules') continue;
    const r = rel === '' ? d.name : `${rel}/${d.name}`;
    const full = `${dir}/${d.name}`;
    let isDir = d.isDirectory();
    let isFile = d.isFile();
    if (d.isSymbolicLink()) {
      try { const st = fs.statSync(full); isDir = st.isDirectory(); isFile = st.isFile(); } catch { continue; }
      if (isDir) continue; // no loops through links
    }
    if (isDir) walk(fs, full, r, out, budget);
    else if (isFile) out.push(r);
  }
}

function globToRegExp(g) {
  let re = '';
  for (let i = 0; i < g.length; i++) {
    const c = g[i];
    if (c === '*') {
      if (g[i + 1] === '*') {
        i++;
        if (g[i + 1] === '/') { i++; re += '(?:.*/)?'; } else re += '.*';
      } else re += '[^/]*';
    } else if (c === '?') re += '[^/]';
    else if (c === '{') {
      const end = g.indexOf('}', i);
      if (end < 0) { re += '\\{'; continue; }
      re += `(?:${g.slice(i + 1, end).split(',').map((x) => x.replace(/[.+^$()|[\]\\]/g, '\\$&')).join('|')})`;
      i = end;
    } else re += c.replace(/[.+^$()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

// findFiles lists the files to run, absolute and sorted as Node lists them.
function findFiles(args, cwd) {
  const fs = require('node:fs');
  const budget = { n: 100000 };
  const out = new Set();
  if (args.length === 0) {
    const all = [];
    walk(fs, cwd, '', all, budget);
    for (const r of all.filter(isTestFile).sort()) out.add(`${cwd}/${r}`);
    return [...out];
  }
  let all = null;
  for (const a of args) {
    if (/[*?{]/.test(a)) {
      if (all === null) { all = []; walk(fs, cwd, '', all, budget); all.sort(); }
      const re = globToRegExp(a.startsWith('./') ? a.slice(2) : a);
      for (const r of all) if (re.test(r)) out.add(`${cwd}/${r}`);
      continue;
    }
    const abs = path.resolve(cwd, a);
    let st;
    try {
      st = fs.statSync(abs);
    } catch {
      const e = new Error(`Could not find '${a}'`);
      e.notFound = true;
      throw e;
    }
    if (st.isDirectory()) {
      const found = [];
      walk(fs, abs, '', found, budget);
      for (const r of found.filter(isTestFile).sort()) out.add(`${abs}/${r}`);
    } else out.add(abs);
  }
  return [...out];
}

// childArgv keeps the options that filter or time tests, which the
// children apply.
function childArgv(execArgv) {
  const keep = ['--test-name-pattern', '--test-skip-pattern', '--test-only', '--test-timeout', '--test-force-exit'];
  const out = [];
  for (let i = 0; i < execArgv.length; i++) {
    const a = execArgv[i];
    const name = a.split('=')[0];
    if (!keep.includes(name)) {
      if (['--test-reporter', '--test-reporter-destination', '--test-concurrency'].includes(a)) i++;
      continue;
    }
    out.push(a);
    if (!a.includes('=') && name !== '--test-only' && name !== '--test-force-exit' && i + 1 < execArgv.length) out.push(execArgv[++i]);
  }
  return out;
}

// runFile runs one test file in a child and passes its events to emit,
// numbering its top-level tests from next.number.
function runFile(file, cwd, argv, emit, next, extraEnv, timeout) {
  const cp = require('node:child_process');
  return new Promise((resolve) => {
    const start = performance.now();
    const env = { ...process.env, ...extraEnv, NODE_TEST_CONTEXT: 'child-v8' };
    if (next.interrupted) { resolve(); return; }
    const child = cp.spawn(process.execPath, [...argv, file], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    next.children.add(child);
    // The run's timeout bounds each file as a whole, so a file stuck in a
    // loop that its own tests' timeouts cannot interrupt still ends.
    let timedOut = false;
    const timers = require('node:timers');
    const timer = Number.isFinite(timeout) ? timers.setTimeout(() => { timedOut = true; child.kill('SIGKILL'); }, timeout) : null;
    child.on('exit', () => next.children.delete(child));
    let buf = '';
    let errBuf = '';
    let topLevel = 0;
    let failedHere = false;
    const line = (l) => {
      if (l.startsWith(report.kMarker)) {
        let e;
        try { e = report.revive(JSON.parse(l.slice(report.kMarker.length))); } catch { return; }
        if (e.type === 'test:fail') failedHere = true;
        if ((e.type === 'test:pass' || e.type === 'test:fail') && e.data.nesting === 0) {
          topLevel++;
          next.count++;
          e.data.testNumber = ++next.number;
        }
        emit(e);
        return;
      }
      emit({ type: 'test:stdout', data: { nesting: 0, file, message: l } });
    };
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (s) => {
      buf += s;
      let i;
      while ((i = buf.indexOf('\n')) >= 0) { line(buf.slice(0, i)); buf = buf.slice(i + 1); }
    });
    child.stderr.on('data', (s) => {
      errBuf += s;
      let i;
      while ((i = errBuf.indexOf('\n')) >= 0) {
        emit({ type: 'test:stderr', data: { nesting: 0, file, message: errBuf.slice(0, i) } });
        errBuf = errBuf.slice(i + 1);
      }
    });
    let settled = false;
    const done = (code, signal) => {
      if (settled) return;
      settled = true;
      if (timer !== null) timers.clearTimeout(timer);
      if (buf !== '') line(buf);
      if (errBuf !== '') emit({ type: 'test:stderr', data: { nesting: 0, file, message: errBuf } });
      if (topLevel === 0 || timedOut || (code !== 0 && code !== null && !failedHere)) {
        const name = path.relative(cwd, file) || file;
        const base = { name, nesting: 0, file, line: 1, column: 1 };
        emit({ type: 'test:start', data: base });
        const details = { duration_ms: performance.now() - start };
        const ok = code === 0 && signal === null && !timedOut;
        if (timedOut) {
          const cause = new Error(`test timed out after ${timeout}ms`);
          cause.code = 'ERR_TEST_FAILURE';
          Object.defineProperty(cause, 'secexecTestFailure', { value: true });
          details.error = { failureType: 'testTimeoutFailure', cause };
        } else if (!ok) {
          const cause = new Error('test failed');
          cause.code = 'ERR_TEST_FAILURE';
          Object.defineProperty(cause, 'secexecTestFailure', { value: true });
          details.error = { failureType: 'testCodeFailure', exitCode: code, signal, cause };
        }
        // Node numbers the entry of a file whose tests were reported with
        // its last test's number, and counts it in the plan all the same.
        const n = topLevel === 0 ? ++next.number : next.number;
        next.count++;
        emit({ type: ok ? 'test:pass' : 'test:fail', data: { ...base, testNumber: n, details } });
      }
      resolve();
    };
    child.on('error', (err) => {
      errBuf += `${err && err.message}\n`;
      done(1, null);
    });
    child.on('close', done);
  });
}

function counter() {
  return { tests: 0, suites: 0, pass: 0, fail: 0, cancelled: 0, skipped: 0, todo: 0 };
}

function count(c, e) {
  if (e.type !== 'test:pass' && e.type !== 'test:fail') return;
  const d = e.data;
  if (d.details.type === 'suite') { c.suites++; return; }
  c.tests++;
  if (d.skip !== undefined) c.skipped++;
  else if (d.todo !== undefined) c.todo++;
  else if (e.type === 'test:pass') c.pass++;
  else if (d.details.error && (d.details.error.failureType === 'cancelledByParent' || d.details.error.failureType === 'testTimeoutFailure')) c.cancelled++;
  else c.fail++;
}

// runAll runs the files one after another (or up to concurrency at
// once, reported in file order) and calls emit for every event,
// summary included.
async function runAll(files, cwd, o, emit) {
  const start = performance.now();
  const c = counter();
  const next = { number: 0, count: 0, children: new Set(), interrupted: false };
  // Interrupted (SIGINT, SIGTERM), the run stops its children, starts no
  // more files and reports what it has, ending with status 1 (Node 22).
  const interrupt = () => {
    next.interrupted = true;
    process.exitCode = 1;
    for (const ch of next.children) ch.kill('SIGTERM');
  };
  if (o.handleSignals) {
    process.on('SIGINT', interrupt);
    process.on('SIGTERM', interrupt);
  }
  // The reporters start at once (TAP's header), before any file reports.
  for (const f of files) emit({ type: 'test:enqueue', data: { nesting: 0, name: f, file: f } });
  const argv = o.argv;
  const conc = Math.max(1, o.concurrency || 1);
  const out = (e) => {
    count(c, e);
    emit(e);
  };
  if (conc === 1) {
    for (const f of files) await runFile(f, cwd, argv, out, next, o.env, o.timeout);
  } else {
    // Run ahead, report in order.
    const buffers = files.map(() => []);
    const finished = files.map(() => false);
    let reported = 0;
    const drain = () => {
      while (reported < files.length && finished[reported]) {
        let lastLocal = 0;
        for (const e of buffers[reported]) {
          if ((e.type === 'test:pass' || e.type === 'test:fail') && e.data.nesting === 0) {
            next.count++;
            const local = e.data.testNumber;
            e.data.testNumber = local === lastLocal ? next.number : ++next.number;
            lastLocal = local;
          }
          out(e);
        }
        reported++;
      }
    };
    let i = 0;
    const lane = async () => {
      while (i < files.length) {
        const k = i++;
        const local = { number: 0, count: 0, children: next.children, get interrupted() { return next.interrupted; } };
        await runFile(files[k], cwd, argv, (e) => buffers[k].push(e), local, o.env, o.timeout);
        finished[k] = true;
        drain();
      }
    };
    const lanes = [];
    for (let n = 0; n < Math.min(conc, files.length); n++) lanes.push(lane());
    await Promise.all(lanes);
  }
  emit({ type: 'test:plan', data: { nesting: 0, count: next.count } });
  const dur = performance.now() - start;
  for (const [k, v] of [['tests', c.tests], ['suites', c.suites], ['pass', c.pass], ['fail', c.fail], ['cancelled', c.cancelled], ['skipped', c.skipped], ['todo', c.todo], ['duration_ms', dur]]) {
    emit({ type: 'test:diagnostic', data: { nesting: 0, message: `${k} ${v}`, summary: true } });
  }
  emit({ type: 'test:summary', data: { counts: c, duration_ms: dur, success: c.fail === 0 && c.cancelled === 0 } });
  if (o.handleSignals) {
    process.removeListener('SIGINT', interrupt);
    process.removeListener('SIGTERM', interrupt);
  }
  if (next.interrupted) c.interrupted = true;
  return c;
}

function parseOptions(execArgv) {
  // Node's default: one file per core but one.
  const o = { reporters: [], destinations: [], concurrency: Math.max(1, require('node:os').availableParallelism() - 1) };
  for (let i = 0; i < execArgv.length; i++) {
    let a = execArgv[i];
    let v;
    const eq = a.indexOf('=');
    if (a.startsWith('--') && eq > 0) { v = a.slice(eq + 1); a = a.slice(0, eq); }
    const val = () => (v !== undefined ? v : execArgv[++i]);
    if (a === '--test-reporter') o.reporters.push(val());
    else if (a === '--test-reporter-destination') o.destinations.push(val());
    else if (a === '--test-concurrency') o.concurrency = Number(val());
    else if (a === '--test-timeout') o.timeout = Number(val());
  }
  return o;
}

// main is node --test [patterns...].
function main(args) {
  const cwd = process.cwd();
  const o = parseOptions(process.execArgv);
  let files;
  try {
    files = findFiles(args, cwd);
  } catch (e) {
    if (!e.notFound) throw e;
    process.stderr.write(`${e.message}\n`);
    process.exitCode = 1;
    return;
  }
  o.argv = childArgv(process.execArgv);
  o.handleSignals = true;
  let rep;
  try {
    rep = report.create({ reporters: o.reporters, destinations: o.destinations, isChild: false });
  } catch (e) {
    process.stderr.write(`${e && e.stack}\n`);
    process.exitCode = 1;
    return;
  }
  const emit = (e) => rep.event(e);
  runAll(files, cwd, o, emit).then((c) => {
    rep.end();
    if (c.fail > 0 || c.cancelled > 0 || c.interrupted) process.exitCode = 1;
    if (process.execArgv.includes('--test-force-exit')) process.exit();
  });
}

// run is node:test's run(): a stream of the events of the files' tests.
function run(options = {}) {
  const { Readable } = require('node:stream');
  const stream = new Readable({ objectMode: true, read() {} });
  const cwd = options.cwd || process.cwd();
  const argv = [];
  if (options.only) argv.push('--test-only');
  for (const p of [].concat(options.testNamePatterns || [])) argv.push(`--test-name-pattern=${p instanceof RegExp ? String(p) : p}`);
  for (const p of [].concat(options.testSkipPatterns || [])) argv.push(`--test-skip-pattern=${p instanceof RegExp ? String(p) : p}`);
  if (options.timeout !== undefined && options.timeout !== Infinity) argv.push(`--test-timeout=${options.timeout}`);
  const files = options.files ? options.files.map((f) => path.resolve(cwd, f)) : findFiles(options.globPatterns || [], cwd);
  const conc = options.concurrency === true ? Infinity : (typeof options.concurrency === 'number' ? options.concurrency : 1);
  const emitter = (e) => {
    stream.push(e);
    stream.emit(e.type, e.data);
  };
  Promise.resolve().then(() => runAll(files, cwd, { argv, concurrency: conc === Infinity ? files.length : conc, timeout: options.timeout }, emitter)).then(() => stream.push(null), (err) => stream.destroy(err));
  return stream;
}

module.exports = { main, run, findFiles, isTestFile };
