'use strict';
// node:test, written for secexec from Node 22's documented behaviour and
// its observable output (see docs/RATIONALE.md for why it is not the npm
// package "test"). A test tree runs in the guest; its results become
// report events (test:start, test:pass, test:fail, test:plan,
// test:diagnostic) in the order Node reports them, and a reporter
// (internal/test_report.js) turns them into TAP, spec, dot or JUnit.
//
// Node tracks which test a call belongs to through async hooks; this
// runtime has none, so the test whose function is running synchronously
// (a describe body, the start of a test function) is the parent of tests
// created without a context, and t.test() names its parent explicitly.
const process = require('node:process');
const report = require('./report.js');
const { typeError, received } = require('./errors.js');
// The runner's own timers are the real ones even while a test mocks them.
const timers = require('node:timers');

const kCancelled = 'test did not finish before its parent and was cancelled';
const kOnlyWarning = "'only' and 'runOnly' require the --test-only command-line option.";
const kPending = 'Promise resolution is still pending but the event loop has already resolved';

function testFailure(cause, failureType, hook) {
  return hook === undefined ? { cause, failureType } : { cause, failureType, hook };
}

// options as node --test / node:test read them from execArgv.
function cliOptions() {
  const o = { only: false, namePatterns: [], skipPatterns: [], timeout: Infinity, reporters: [], destinations: [], isChild: false };
  const argv = process.execArgv || [];
  for (let i = 0; i < argv.length; i++) {
    let a = argv[i];
    let v;
    const eq = a.indexOf('=');
    if (a.startsWith('--') && eq > 0) { v = a.slice(eq + 1); a = a.slice(0, eq); }
    const val = () => (v !== undefined ? v : argv[++i]);
    switch (a) {
      case '--test-only': o.only = true; break;
      case '--test-force-exit': o.forceExit = true; break;
      case '--test-name-pattern': o.namePatterns.push(toRegExp(val())); break;
      case '--test-skip-pattern': o.skipPatterns.push(toRegExp(val())); break;
      case '--test-timeout': o.timeout = Number(val()); break;
      case '--test-reporter': o.reporters.push(val()); break;
      case '--test-reporter-destination': o.destinations.push(val()); break;
      default: break;
    }
  }
  o.isChild = process.env.NODE_TEST_CONTEXT === 'child-v8';
  return o;
}

// toRegExp reads a pattern as Node does: /re/flags or a plain source.
function toRegExp(s) {
  const m = /^\/(.*)\/([a-z]*)$/s.exec(s);
  return m ? new RegExp(m[1], m[2]) : new RegExp(s);
}

// callSite finds the guest's frame that called into node:test: the first
// frame outside the runtime's own code.
function callSite() {
  const e = {};
  const prev = Error.stackTraceLimit;
  Error.stackTraceLimit = 30;
  Error.captureStackTrace(e, callSite);
  Error.stackTraceLimit = prev;
  const lines = String(e.stack).split('\n').slice(1);
  for (const l of lines) {
    const m = /(?:\(|at )((?:file:\/\/)?\/[^()]*?):(\d+):(\d+)\)?\s*$/.exec(l);
    if (m) {
      let file = m[1];
      if (file.startsWith('file://')) file = decodeURIComponent(file.slice(7));
      return { file, line: Number(m[2]), column: Number(m[3]) };
    }
  }
  return undefined;
}

// calledFromPromiseJob tells whether the guest code calling node:test
// runs as a promise job (the continuation of an await), not under the
// module loader or a timer: its frame is then the last of the stack.
function calledFromPromiseJob() {
  const e = {};
  const prev = Error.stackTraceLimit;
  Error.stackTraceLimit = 50;
  Error.captureStackTrace(e, calledFromPromiseJob);
  Error.stackTraceLimit = prev;
  const lines = String(e.stack).split('\n').slice(1).filter((l) => !/^\s+at async /.test(l));
  const i = lines.findIndex((l) => /(?:\(|at )(?:file:\/\/)?\/[^()]*:\d+:\d+\)?\s*$/.test(l));
  return i >= 0 && i === lines.length - 1;
}

let nextId = 0;
let current = null; // the test whose function runs synchronously now
const building = []; // suites whose async describe body is pending

class Test {
  constructor(parent, name, options, fn, kind) {
    this.id = ++nextId;
    this.parent = parent;
    this.kind = kind; // 'root' | 'test' | 'suite'
    this.name = name;
    this.fn = fn;
    this.nesting = parent ? parent.nesting + 1 : -1;
    this.subtests = [];
    this.hooks = { before: [], after: [], beforeEach: [], afterEach: [] };
    this.diagnostics = [];
    this.error = null;
    this.finished = false;
    this.started = false;
    this.cancelled = false;
    this.skip = options.skip === undefined || options.skip === false ? false : options.skip;
    this.todo = options.todo === undefined || options.todo === false ? false : options.todo;
    this.only = !!options.only;
    this.timeout = options.timeout === undefined ? (parent ? parent.timeout : Infinity) : options.timeout;
    const conc = options.concurrency;
    this.concurrency = conc === true ? Infinity : (typeof conc === 'number' ? conc : 1);
    this.planned = options.plan === undefined ? null : options.plan;
    this.assertions = 0;
    this.loc = options.loc;
    this.filtered = false;
    this.controller = new AbortController();
    this.duration = 0;
    this.runOnlyFlag = false;
    this.done = null;
    this.waiting = [];
    this.running = 0;
    this.resolveDone = null;
    if (parent && parent.kind !== 'root' && parent.skip && !this.skip) this.skip = true;
  }

  get fullName() {
    const names = [];
    for (let t = this; t && t.kind !== 'root'; t = t.parent) names.unshift(t.name);
    return names.join(' > ');
  }

  fail(err) {
    if (this.error === null) this.error = err;
  }

  // run runs the test (or suite) and everything under it; it resolves
  // when the test has finished and its report is ready.
  run() {
    if (this.done === null) this.done = this.runInner();
    return this.done;
  }

  async runHooks(which, ctx, list) {
    for (const h of list) {
      await callWithTimeout(h.fn, ctx, h.timeout, this);
    }
  }

  // ancestorHooks lists the beforeEach (outermost first) or afterEach
  // (innermost first) hooks that apply to this test.
  ancestorHooks(which) {
    const out = [];
    for (let t = this.parent; t; t = t.parent) {
      if (which === 'beforeEach') out.unshift(...t.hooks.beforeEach);
      else out.push(...t.hooks.afterEach);
    }
    return out;
  }

  async runInner() {
    this.started = true;
    const start = performance.now();
    const ctx = this.kind === 'suite' ? new SuiteContext(this) : new TestContext(this);
    try {
      if (this.skip) return;
      if (this.kind === 'suite') {
        await this.buildDone;
        if (this.error === null) {
          try {
            await this.runHooks('before', ctx, this.hooks.before);
          } catch (e) {
            this.fail(testFailure(e, 'hookFailed', 'before'));
          }
        }
        if (this.error === null) await this.runSubtests();
        try {
          await this.runHooks('after', ctx, this.hooks.after);
        } catch (e) {
          this.fail(testFailure(e, 'hookFailed', 'after'));
        }
        return;
      }
      // Without hooks the test function starts synchronously.
      const beforeEach = this.ancestorHooks('beforeEach');
      if (beforeEach.length > 0) {
        try {
          await this.runHooks('beforeEach', ctx, beforeEach);
        } catch (e) {
          this.fail(testFailure(e, 'hookFailed', 'beforeEach'));
        }
      }
      if (this.error === null && this.fn) {
        try {
          await callWithTimeout(this.fn, ctx, this.timeout, this);
        } catch (e) {
          this.fail(e && e.failureType ? e : testFailure(e, 'testCodeFailure'));
        }
      }
      // Subtests still running when the test function ends are cancelled;
      // those that never started at once, and after a few microtask turns
      // (in which synchronous ones end, as they do in Node) the rest.
      for (const s of this.waiting.splice(0)) s.cancel();
      for (let i = 0; i < 20 && this.subtests.some((s) => !s.finished && !s.filtered); i++) await null;
      for (const s of this.subtests) if (!s.finished) s.cancel();
      // The afterEach hooks of the ancestors, then the test's own after.
      try {
        await this.runHooks('afterEach', ctx, this.ancestorHooks('afterEach'));
      } catch (e) {
        this.fail(testFailure(e, 'hookFailed', 'afterEach'));
      }
      if (this.beforeRunning) await this.beforeRunning;
      try {
        await this.runHooks('after', ctx, this.hooks.after);
      } catch (e) {
        this.fail(testFailure(e, 'hookFailed', 'after'));
      }
      if (this.error === null && this.planned !== null && this.planned !== this.assertions) {
        this.fail(testFailure(new TestFailure(`plan expected ${this.planned} assertions but received ${this.assertions}`), 'testCodeFailure'));
      }
    } finally {
      this.duration = performance.now() - start;
      this.finish();
    }
  }

  async runSubtests() {
    const todo = this.subtests.filter((s) => !s.filtered);
    if (this.concurrency === 1) {
      for (const s of todo) await s.run();
      return;
    }
    let i = 0;
    const lanes = [];
    const lane = async () => { while (i < todo.length) await todo[i++].run(); };
    for (let n = 0; n < Math.min(this.concurrency, todo.length); n++) lanes.push(lane());
    await Promise.all(lanes);
  }

  cancel(err) {
    if (this.finished || this.filtered) return;
    this.cancelled = true;
    this.fail(testFailure(new TestFailure(err || kCancelled), 'cancelledByParent'));
    for (const s of this.subtests) s.cancel();
    this.finish();
  }

  finish() {
    if (this.finished) return;
    this.finished = true;
    this.controller.abort();
    if (this.resolveDone) this.resolveDone();
    if (this.mockTracker) this.mockTracker.reset();
    for (const s of this.subtests) if (!s.finished) s.cancel();
    if (this.error === null) {
      const failed = this.subtests.filter((s) => !s.filtered && s.isFailure()).length;
      if (failed > 0) this.error = testFailure(new TestFailure(`${failed} subtest${failed === 1 ? '' : 's'} failed`), 'subtestsFailed');
    }
    if (this.error !== null && !this.todo && this.kind !== 'root') process.exitCode = 1;
    if (this.parent) this.parent.childFinished(this);
  }

  isFailure() { return this.error !== null && !this.todo; }

  childFinished() {
    drain(rootTest);
  }

  // base is what every report event of this test carries.
  base() {
    return { name: this.name, nesting: this.nesting, file: this.loc && this.loc.file, line: this.loc && this.loc.line, column: this.loc && this.loc.column };
  }

  createSubtest(kind, name, options, fn) {
    if (typeof name === 'function') { fn = name; options = {}; name = fn.name || '<anonymous>'; }
    else if (typeof name === 'object' && name !== null) { fn = options; options = name; name = (fn && fn.name) || '<anonymous>'; }
    else if (typeof options === 'function') { fn = options; options = {}; }
    if (options === undefined || options === null) options = {};
    if (name === undefined || name === null) name = (fn && fn.name) || '<anonymous>';
    name = String(name);
    validateTestOptions(options);
    const t = new Test(this, name, { ...options, loc: options.loc || callSite() }, fn, kind);
    if (fn === undefined && kind !== 'suite' && t.skip === false && t.todo === false) t.fn = () => {};
    this.subtests.push(t);
    applyFilters(t);
    // Node's reporters start (TAP prints its header) on the first event.
    if (!t.filtered && rootTest) rootTest.reporter.event({ type: 'test:enqueue', data: t.base() });
    if (kind === 'suite') {
      const ctx = new SuiteContext(t);
      const prev = current;
      current = t;
      try {
        // A skipped suite's body never runs.
        const r = fn && !t.skip ? fn.call(ctx, ctx) : undefined;
        if (r && typeof r.then === 'function') {
          // Tests created while an async describe body is pending belong
          // to it (Node knows through async context).
          building.push(t);
          t.buildDone = Promise.resolve(r).catch((e) => t.fail(testFailure(e, 'testCodeFailure'))).finally(() => {
            building.splice(building.indexOf(t), 1);
          });
        }
      } catch (e) {
        t.fail(testFailure(e, 'testCodeFailure'));
      } finally {
        current = prev;
      }
      if (t.error === null) applySuiteFilter(t);
      // A skipped suite reports none of its tests.
      if (t.skip) t.subtests = [];
    }
    if (t.only && !cliOpts().only) t.diagnostics.push(kOnlyWarning);
    return t;
  }
}

class TestFailure extends Error {
  constructor(msg) {
    super(msg);
    this.code = 'ERR_TEST_FAILURE';
    Object.defineProperty(this, 'secexecTestFailure', { value: true });
  }
}
Object.defineProperty(TestFailure.prototype, 'name', { value: 'Error', configurable: true, writable: true });

// applyFilters hides tests that --test-name-pattern, --test-skip-pattern
// or --test-only leave out.
function applyFilters(t) {
  const o = cliOpts();
  const p = t.parent;
  if (p && p.filtered) { t.filtered = true; return; }
  if (t.kind !== 'suite') {
    const full = t.fullName.split(' > ').join(' ');
    if (o.namePatterns.length > 0 && !ancestorMatched(t) && !o.namePatterns.some((re) => re.test(t.name) || re.test(full))) t.filtered = true;
    if (o.skipPatterns.length > 0 && o.skipPatterns.some((re) => re.test(t.name) || re.test(full))) t.filtered = true;
  }
  // --test-only (Node 22) leaves out what is not marked only: a test
  // runs if it or an ancestor is, or if its parent is a running test
  // (not a suite, not the root) that did not ask for runOnly.
  if (o.only && p && t.kind !== 'suite' && !t.only) {
    if (p.runOnlyFlag || (!inOnlyScope(t) && (p.kind === 'root' || p.kind === 'suite'))) t.filtered = true;
  }
}

function inOnlyScope(t) {
  for (let a = t; a && a.kind !== 'root'; a = a.parent) if (a.only) return true;
  return false;
}

function ancestorMatched(t) {
  const o = cliOpts();
  for (let a = t.parent; a && a.kind !== 'root'; a = a.parent) {
    if (a.kind === 'suite') continue;
    if (!a.filtered && o.namePatterns.some((re) => re.test(a.name))) return true;
  }
  return false;
}

// A suite is reported only if something in it is left to run.
function applySuiteFilter(t) {
  const o = cliOpts();
  if (o.namePatterns.length > 0 || o.skipPatterns.length > 0) {
    const anyRun = t.subtests.some((s) => !s.filtered);
    if (!anyRun) t.filtered = true;
  }
  // Under --test-only a suite outside every only stays if something in
  // it does.
  if (o.only && !inOnlyScope(t) && !t.subtests.some((s) => !s.filtered)) t.filtered = true;
}

// callWithTimeout calls a test or hook function with its context: a
// promise it returns or the done callback (for functions that take one
// more argument than the context) ends it.
function callWithTimeout(fn, ctx, timeout, test) {
  return new Promise((resolve, reject) => {
    let timer = null;
    const settle = (f, v) => { if (timer !== null) timers.clearTimeout(timer); f(v); };
    if (timeout !== Infinity && timeout !== undefined && Number.isFinite(timeout)) {
      timer = timers.setTimeout(() => {
        reject(testFailure(new TestFailure(`test timed out after ${timeout}ms`), 'testTimeoutFailure'));
      }, timeout);
    }
    const prev = current;
    current = test;
    let r;
    try {
      if (fn.length >= 2) {
        let called = false;
        const done = (err) => {
          if (called) return;
          called = true;
          if (err) settle(reject, err); else settle(resolve);
        };
        r = fn.call(ctx, ctx, done);
        if (r && typeof r.then === 'function') {
          settle(reject, testFailure(new TestFailure('passed a callback but also returned a Promise'), 'callbackAndPromisePresent'));
        }
        return;
      }
      r = fn.call(ctx, ctx);
    } catch (e) {
      settle(reject, e);
      return;
    } finally {
      current = prev;
    }
    if (r && typeof r.then === 'function') {
      Promise.resolve(r).then(() => settle(resolve), (e) => settle(reject, e));
    } else {
      settle(resolve);
    }
  });
}

// t.assert has assert's functions (not its classes nor strict), each
// counting towards t.plan, the snapshot ones, and those registered with
// test.assert.register.
const notCopied = new Set(['AssertionError', 'CallTracker', 'strict']);
const customAssertions = new Map();

function snapshotUnsupported() {
  const e = new Error('snapshot testing is not supported in this sandbox');
  e.code = 'ERR_ACCESS_DENIED';
  throw e;
}

class TestContext {
  #test;
  #assert;
  constructor(test) { this.#test = test; }
  get name() { return this.#test.name; }
  get fullName() { return this.#test.fullName; }
  get signal() { return this.#test.controller.signal; }
  get filePath() { return entryFile(); }
  get assert() {
    if (this.#assert) return this.#assert;
    const assert = require('node:assert');
    const test = this.#test;
    const a = {};
    const ctx = this;
    for (const m of Object.keys(assert)) {
      if (notCopied.has(m) || typeof assert[m] !== 'function') continue;
      a[m] = function(...args) { test.assertions++; return Reflect.apply(assert[m], this, args); };
    }
    a.snapshot = snapshotUnsupported;
    a.fileSnapshot = snapshotUnsupported;
    for (const [name, fn] of customAssertions) {
      a[name] = function(...args) { test.assertions++; return Reflect.apply(fn, ctx, args); };
    }
    this.#assert = a;
    return a;
  }
  get mock() {
    const t = this.#test;
    if (!t.mockTracker) t.mockTracker = new (require('./mock.js').MockTracker)();
    return t.mockTracker;
  }
  diagnostic(message) { this.#test.diagnostics.push(String(message)); }
  plan(count) {
    if (typeof count !== 'number') throw typeError('ERR_INVALID_ARG_TYPE', 'The "count" argument must be of type number.');
    this.#test.planned = count;
  }
  runOnly(v) {
    this.#test.runOnlyFlag = !!v;
    if (v && !cliOpts().only) this.#test.diagnostics.push(kOnlyWarning);
  }
  skip(message) { this.#test.skip = message === undefined ? true : String(message); }
  todo(message) { this.#test.todo = message === undefined ? true : String(message); }
  before(fn, opts) {
    const t = this.#test;
    addHook(t, 'before', fn, opts);
    // A before hook added while its test runs runs at once.
    if (t.started && !t.finished) {
      const h = t.hooks.before[t.hooks.before.length - 1];
      const p = callWithTimeout(h.fn, this, h.timeout, t).catch((e) => t.fail(testFailure(e, 'hookFailed', 'before')));
      t.beforeRunning = t.beforeRunning ? Promise.all([t.beforeRunning, p]) : p;
    }
  }
  after(fn, opts) { addHook(this.#test, 'after', fn, opts); }
  beforeEach(fn, opts) { addHook(this.#test, 'beforeEach', fn, opts); }
  afterEach(fn, opts) { addHook(this.#test, 'afterEach', fn, opts); }
  test(name, options, fn) {
    const parent = this.#test;
    parent.assertions++;
    const t = parent.createSubtest('test', name, options, fn);
    if (t.filtered) return Promise.resolve();
    if (parent.finished) {
      t.cancel();
      return Promise.resolve();
    }
    return startWhenFree(parent, t).then(() => undefined);
  }
  waitFor(condition, opts = {}) {
    if (typeof condition !== 'function') throw typeError('ERR_INVALID_ARG_TYPE', 'The "condition" argument must be of type function.');
    if (opts === null || typeof opts !== 'object') throw typeError('ERR_INVALID_ARG_TYPE', 'The "options" argument must be of type object.');
    for (const k of ['interval', 'timeout']) {
      if (opts[k] !== undefined && typeof opts[k] !== 'number') throw typeError('ERR_INVALID_ARG_TYPE', `The "options.${k}" property must be of type number.`);
    }
    const interval = opts.interval === undefined ? 50 : opts.interval;
    const timeout = opts.timeout === undefined ? 1000 : opts.timeout;
    // The condition is polled every interval until it fulfils; the
    // timeout ends the wait even while an attempt is pending.
    return new Promise((resolve, reject) => {
      let done = false;
      let lastError;
      let poll = null;
      const timer = timers.setTimeout(() => {
        done = true;
        if (poll !== null) timers.clearTimeout(poll);
        const e = new Error('waitFor() timed out');
        if (lastError !== undefined) e.cause = lastError;
        reject(e);
      }, timeout);
      const attempt = async () => {
        poll = null;
        try {
          const v = await condition();
          if (!done) { done = true; timers.clearTimeout(timer); resolve(v); }
        } catch (e) {
          lastError = e;
          if (!done) poll = timers.setTimeout(attempt, interval);
        }
      };
      attempt();
    });
  }
}

// Subtests of one test run up to its concurrency at once (1: in order).
// One that can start starts at once, inside the call that created it,
// as in Node; the others wait their turn, and are cancelled if the
// parent ends first.
function startWhenFree(parent, t) {
  return new Promise((resolve) => {
    t.resolveDone = resolve;
    parent.waiting.push(t);
    pump(parent);
  });
}

function pump(parent) {
  while (parent.running < parent.concurrency && parent.waiting.length > 0) {
    const t = parent.waiting.shift();
    if (t.finished) { t.resolveDone(); continue; }
    parent.running++;
    t.run().then(() => {
      parent.running--;
      t.resolveDone();
      pump(parent);
    });
  }
}

class SuiteContext {
  #test;
  constructor(test) { this.#test = test; }
  get name() { return this.#test.name; }
  get fullName() { return this.#test.fullName; }
  get signal() { return this.#test.controller.signal; }
  get filePath() { return entryFile(); }
}


// entryFile is what Node's t.filePath gives: the file the process was
// started with (each file's own process under node --test), even for a
// test defined in a module that file required.
function entryFile() {
  const main = process.argv[1];
  return typeof main === 'string' && main !== '' ? require('node:path').resolve(main) : undefined;
}

// validateTestOptions checks what Node's Test constructor checks, with its
// codes and messages, before the test exists.
function validateTestOptions({ timeout, concurrency, signal }) {
  if (timeout !== undefined && timeout !== null && timeout !== Infinity) {
    if (typeof timeout !== 'number') throw typeError('ERR_INVALID_ARG_TYPE', `The "options.timeout" property must be of type number. Received ${received(timeout)}`);
    if (!(timeout >= 0 && timeout <= 2147483647)) throw outOfRange('options.timeout', '>= 0 && <= 2147483647', timeout);
  }
  if (concurrency !== undefined && concurrency !== null && typeof concurrency !== 'boolean') {
    if (typeof concurrency !== 'number') throw typeError('ERR_INVALID_ARG_TYPE', `The "options.concurrency" property must be one of type boolean or number. Received ${received(concurrency)}`);
    if (!Number.isInteger(concurrency)) throw outOfRange('options.concurrency', 'an integer', concurrency);
    if (concurrency < 1 || concurrency > 4294967295) throw outOfRange('options.concurrency', '>= 1 && <= 4294967295', concurrency);
  }
  // Node accepts anything shaped like an AbortSignal.
  if (signal !== undefined && (signal === null || typeof signal !== 'object' || !('aborted' in signal))) {
    throw typeError('ERR_INVALID_ARG_TYPE', `The "options.signal" property must be an instance of AbortSignal. Received ${received(signal)}`);
  }
}

// outOfRange is Node's ERR_OUT_OF_RANGE; integers beyond 2 ** 32 show
// with digit separators, as Node prints them.
function outOfRange(name, range, v) {
  let shown = String(v);
  if (Number.isInteger(v) && Math.abs(v) > 2 ** 32) shown = shown.replace(/\B(?=(\d{3})+$)/g, '_');
  const e = new RangeError(`The value of "${name}" is out of range. It must be ${range}. Received ${shown}`);
  e.code = 'ERR_OUT_OF_RANGE';
  return e;
}


function addHook(test, which, fn, opts = {}) {
  if (typeof fn !== 'function') throw typeError('ERR_INVALID_ARG_TYPE', `The "fn" argument must be of type function.${fn === undefined ? ' Received undefined' : ''}`);
  test.hooks[which].push({ fn, timeout: opts && opts.timeout !== undefined ? opts.timeout : Infinity });
}

// ---- the root of a file's tests ----

let rootTest = null;
let cachedOptions = null;
function cliOpts() { return cachedOptions || (cachedOptions = cliOptions()); }

function getRoot() {
  if (rootTest) return rootTest;
  const r = new Test(null, '<root>', { timeout: cliOpts().timeout }, undefined, 'root');
  rootTest = r;
  r.startTime = performance.now();
  r.reporter = report.create(cliOpts());
  r.rootDiagnostics = [];
  r.chain = Promise.resolve();
  r.counts = { tests: 0, suites: 0, pass: 0, fail: 0, cancelled: 0, skipped: 0, todo: 0 };
  process.on('uncaughtException', (err) => onAsyncError(err, 'uncaughtException'));
  process.on('unhandledRejection', (err) => onAsyncError(err, 'unhandledRejection'));
  process.on('beforeExit', () => { rootEnd(r); });
  return r;
}

// onAsyncError fails the test that is running when an error escapes it.
function onAsyncError(err, type) {
  const r = rootTest;
  const t = ownerOf(r, err);
  if (t === null) throw err;
  if (t.finished) {
    // Node reports an error from a test that has ended as a diagnostic.
    r.rootDiagnostics.push(`Error: Test "${t.name}" at ${locText(t)} generated asynchronous activity after the test ended. This activity created the error "${err}" and would have caused the test to fail, but instead triggered an ${type} event.`);
    process.exitCode = 1;
    return;
  }
  t.fail(testFailure(err, type));
}

// ownerOf guesses the test an asynchronous error comes from. Node knows
// through async context; here the error's first frame in a test file
// points at the test whose call comes last before it in that file (the
// function that threw is written inside that test), else the test
// running now, else the last one that ended.
function ownerOf(r, err) {
  const all = [];
  const walk = (n) => { for (const s of n.subtests) { all.push(s); walk(s); } };
  walk(r);
  const stack = err && typeof err.stack === 'string' ? err.stack : '';
  for (const line of stack.split('\n')) {
    const m = /(?:\(|at )(?:file:\/\/)?(\/[^()]*?):(\d+):(\d+)\)?\s*$/.exec(line);
    if (!m) continue;
    const inFile = all.filter((s) => s.loc && s.loc.file === m[1] && s.started);
    if (inFile.length === 0) continue;
    const ln = Number(m[2]);
    const col = Number(m[3]);
    let best = null;
    for (const s of inFile) {
      const before = s.loc.line < ln || (s.loc.line === ln && s.loc.column <= col);
      if (before && (best === null || s.loc.line > best.loc.line || (s.loc.line === best.loc.line && s.loc.column > best.loc.column))) best = s;
    }
    if (best !== null) return best;
    break;
  }
  let running = null;
  const walkRunning = (n) => { for (const s of n.subtests) if (s.started && !s.finished) { running = s; walkRunning(s); } };
  walkRunning(r);
  return running || lastFinished(r);
}

function lastFinished(r) {
  let last = null;
  const walk = (n) => { for (const s of n.subtests) { if (s.finished) last = s; walk(s); } };
  walk(r);
  return last;
}

function locText(t) {
  if (!t.loc) return 'unknown';
  const rel = t.loc.file.startsWith(process.cwd() + '/') ? t.loc.file.slice(process.cwd().length + 1) : t.loc.file;
  return `${rel}:${t.loc.line}:${t.loc.column}`;
}

// Reporting follows Node's order: a test's report (its start, its
// subtests, its plan, its result, its diagnostics) comes after the
// reports of the siblings before it; a running test is opened (its start
// reported) once its first subtest can be, and its subtests are then
// reported as they end.
function emit(r, e) {
  count(r.counts, e);
  r.reporter.event(e);
}

function canOpen(t) {
  const first = t.subtests.find((s) => !s.filtered);
  return first !== undefined && (first.finished || canOpen(first));
}

function openTest(r, t) {
  if (t.startEmitted) return;
  t.startEmitted = true;
  emit(r, { type: 'test:start', data: t.base() });
}

function drain(node) {
  const r = rootTest;
  if (node.nextChild === undefined) { node.nextChild = 0; node.numbered = 0; }
  while (node.nextChild < node.subtests.length) {
    const c = node.subtests[node.nextChild];
    if (c.filtered) { node.nextChild++; continue; }
    if (c.finished) {
      node.nextChild++;
      c.testNumber = ++node.numbered;
      reportAll(r, c);
      continue;
    }
    if (!c.startEmitted && !canOpen(c)) return;
    openTest(r, c);
    drain(c);
    return;
  }
}

function reportAll(r, t) {
  openTest(r, t);
  drain(t);
  const shown = t.subtests.filter((s) => !s.filtered).length;
  if (shown > 0) emit(r, { type: 'test:plan', data: { nesting: t.nesting + 1, count: shown } });
  const details = { duration_ms: t.duration };
  if (t.kind === 'suite') details.type = 'suite';
  if (!t.started) details.neverStarted = true;
  if (t.error !== null) details.error = t.error;
  const data = { ...t.base(), testNumber: t.testNumber, details };
  if (t.skip !== false) data.skip = t.skip;
  else if (t.todo !== false) data.todo = t.todo;
  emit(r, { type: t.error !== null ? 'test:fail' : 'test:pass', data });
  for (const d of t.diagnostics) emit(r, { type: 'test:diagnostic', data: { nesting: t.nesting, message: d } });
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

function runRootAfter(r) {
  if (r.afterDone === undefined) {
    r.afterDone = r.runHooks('after', new TestContext(r), r.hooks.after).catch((e) => {
      r.rootDiagnostics.push(String(e && e.message));
    });
  }
  return r.afterDone;
}

let ended = false;
async function rootEnd(r) {
  if (ended) return;
  ended = true;
  await runRootAfter(r);
  for (const t of r.subtests) if (!t.finished && !t.filtered) t.cancel(kPending);
  drain(r);
  const visible = r.subtests.filter((s) => !s.filtered).length;
  r.reporter.event({ type: 'test:plan', data: { nesting: 0, count: visible } });
  for (const d of r.rootDiagnostics.splice(0)) r.reporter.event({ type: 'test:diagnostic', data: { nesting: 0, message: d } });
  const c = r.counts;
  const dur = performance.now() - r.startTime;
  for (const [k, v] of [['tests', c.tests], ['suites', c.suites], ['pass', c.pass], ['fail', c.fail], ['cancelled', c.cancelled], ['skipped', c.skipped], ['todo', c.todo], ['duration_ms', dur]]) {
    r.reporter.event({ type: 'test:diagnostic', data: { nesting: 0, message: `${k} ${v}`, summary: true } });
  }
  r.reporter.event({ type: 'test:summary', data: { counts: c, duration_ms: dur } });
  r.reporter.end();
  if (c.fail > 0 || c.cancelled > 0) process.exitCode = 1;
  // --test-force-exit: end even if timers or handles are still open.
  if (cliOpts().forceExit) process.exit();
}

// Top-level tests run one after another, each starting once the
// previous one has ended (Node's root runs its subtests in order).
function startTopLevel(r, t) {
  if (t.filtered) return Promise.resolve();
  if (r.beforeDone === undefined) {
    r.beforeDone = r.chain.then(() => r.runHooks('before', new TestContext(r), r.hooks.before)).catch((e) => { r.rootDiagnostics.push(String(e)); });
    r.chain = r.beforeDone;
  }
  const p = r.chain.then(() => t.run()).then(() => {
    // The root's after hooks run once its last test has ended, before
    // that test is reported (the reporter lags a macrotask).
    if (!r.subtests.every((s) => s.finished || s.filtered)) return undefined;
    const after = runRootAfter(r);
    // --test-force-exit does not wait for the loop to run dry.
    return cliOpts().forceExit ? after.then(() => rootEnd(r)) : after;
  });
  r.chain = p.catch(() => {});
  return p;
}

function parentForNew() {
  if (current && !current.finished) return current;
  if (building.length > 0 && calledFromPromiseJob()) return building[building.length - 1];
  return getRoot();
}

function makeTestFn(kind) {
  const fn = (name, options, f) => {
    const r = getRoot();
    const parent = parentForNew();
    const t = parent.createSubtest(kind, name, options, f);
    let done;
    if (parent === r) done = startTopLevel(r, t);
    else if (parent.kind === 'test') done = startWhenFree(parent, t);
    else done = Promise.resolve();
    // test() settles when the test has ended, suite() at once (Node 22).
    return kind === 'suite' ? Promise.resolve() : done.then(() => undefined);
  };
  fn.skip = (name, options, f) => fn(...withOption(name, options, f, 'skip'));
  fn.todo = (name, options, f) => fn(...withOption(name, options, f, 'todo'));
  fn.only = (name, options, f) => fn(...withOption(name, options, f, 'only'));
  return fn;
}

function withOption(name, options, f, key) {
  if (typeof name === 'function') return [{ [key]: true }, name];
  if (typeof name === 'object' && name !== null) return [{ ...name, [key]: true }, options];
  if (typeof options === 'function') return [name, { [key]: true }, options];
  return [name, { ...(options || {}), [key]: true }, f];
}

function hookFn(which) {
  return (fn, opts) => {
    getRoot();
    addHook(parentForNew(), which, fn, opts);
  };
}

const test = makeTestFn('test');
const suite = makeTestFn('suite');
const it = test;
test.test = test;
test.it = it;
test.describe = suite;
test.suite = suite;
test.before = hookFn('before');
test.after = hookFn('after');
test.beforeEach = hookFn('beforeEach');
test.afterEach = hookFn('afterEach');
test.run = (...a) => require('./cli.js').run(...a);
let mockTracker;
Object.defineProperty(test, 'mock', {
  enumerable: true,
  configurable: true,
  get() { return mockTracker || (mockTracker = new (require('./mock.js').MockTracker)()); },
});
test.assert = {
  register(name, fn) {
    if (typeof name !== 'string') throw typeError('ERR_INVALID_ARG_TYPE', `The "name" argument must be of type string. Received ${received(name)}`);
    if (typeof fn !== 'function') throw typeError('ERR_INVALID_ARG_TYPE', `The "fn" argument must be of type function. Received ${received(fn)}`);
    customAssertions.set(name, fn);
  },
};
test.snapshot = { setDefaultSnapshotSerializers() {}, setResolveSnapshotPath() {} };

module.exports = test;
