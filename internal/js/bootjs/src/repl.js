'use strict';
// repl: node's interactive read-eval-print loop, started by `node` with
// no script on a terminal. On a terminal readline edits the line (raw
// mode, arrows, history persisted as Node's is); each entry is evaluated
// in the one global context with `require` and `module` of the working
// directory, top-level await, `_` and `_error`; incomplete input continues
// on "... " lines; ^C stops a running evaluation (the terminal is back in
// cooked mode while it runs, so ^C is a SIGINT that terminates it) and
// otherwise clears the line, twice exits; .exit, .help, .break and ^D.
const EventEmitter = require('./events.js');
const P = require('./internal/primordials.js');
const { B } = require('./internal/bridge.js');

// Captured at start-up: a guest that replaces them does not change how
// the REPL evaluates.
const AsyncFunction = P.ObjectGetPrototypeOf(async function () {}).constructor;
const promiseThen = Promise.prototype.then;
const SyntaxErrorCtor = SyntaxError;
const ErrorCtor = Error;
const ProxyCtor = Proxy;

// maxHistoryFile bounds the history file read at start.
const maxHistoryFile = 4 << 20;

const KEYWORDS = new Set(['return', 'typeof', 'instanceof', 'in', 'of', 'new', 'delete', 'void', 'throw',
  'case', 'do', 'else', 'yield', 'await']);

// scan walks JavaScript source well enough to find, outside strings,
// templates, comments and regular expressions, the statements of the top
// level: the declarations that start one (decls: position and keyword),
// where one may end (ends: after a ';', a block or a newline), and every
// identifier used (idents).
function scan(code) {
  const decls = [];
  const ends = [];
  const idents = new Set();
  const stack = []; // open brackets; '${' resumes a template when closed
  const n = code.length;
  let i = 0;
  let prev = ''; // the last token: 'v' a value, 'k' a keyword, or a punctuator
  let newline = true;
  let body = null; // the class or function declaration whose body is open
  const template = () => {
    // i is just after '`' or a closing '}' of '${'
    while (i < n) {
      const c = code[i];
      if (c === '\\') { i += 2; continue; }
      if (c === '`') { i++; prev = 'v'; return; }
      if (c === '$' && code[i + 1] === '{') { stack.push('${'); i += 2; prev = '{'; return; }
      i++;
    }
  };
  while (i < n) {
    const c = code[i];
    if (c === '\n') {
      if (stack.length === 0) ends.push(i + 1);
      newline = true;
      i++;
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\r') { i++; continue; }
    if (c === '/' && code[i + 1] === '/') { while (i < n && code[i] !== '\n') i++; continue; }
    if (c === '/' && code[i + 1] === '*') { const e = code.indexOf('*/', i + 2); i = e < 0 ? n : e + 2; continue; }
    const atStart = stack.length === 0 && (prev === '' || prev === ';' || prev === '}' || newline);
    newline = false;
    if (c === '"' || c === "'") {
      i++;
      while (i < n && code[i] !== c && code[i] !== '\n') i += code[i] === '\\' ? 2 : 1;
      i++;
      prev = 'v';
      continue;
    }
    if (c === '`') { i++; template(); continue; }
    if (/[A-Za-z_$\u0080-\uffff]/.test(c)) {
      let j = i + 1;
      while (j < n && /[\w$\u0080-\uffff]/.test(code[j])) j++;
      const word = code.slice(i, j);
      if (atStart && (word === 'let' || word === 'const' || word === 'var' || word === 'class' || word === 'function')) {
        decls.push({ pos: i, kw: word });
        if (word === 'class' || word === 'function') body = decls[decls.length - 1];
      } else if (atStart && word === 'async' && /^\s+function\b/.test(code.slice(j))) {
        decls.push({ pos: i, kw: 'async' });
        body = decls[decls.length - 1];
      }
      if (prev !== '.') idents.add(word);
      prev = KEYWORDS.has(word) ? 'k' : 'v';
      i = j;
      continue;
    }
    if (/[0-9]/.test(c)) {
      while (i < n && /[\w.]/.test(code[i])) i++;
      prev = 'v';
      continue;
    }
    if (c === '/' && prev !== 'v' && prev !== ')' && prev !== ']' && prev !== '}') {
      // a regular expression literal
      i++;
      let cls = false;
      while (i < n && code[i] !== '\n') {
        const d = code[i];
        if (d === '\\') { i += 2; continue; }
        if (d === '[') cls = true;
        else if (d === ']') cls = false;
        else if (d === '/' && !cls) break;
        i++;
      }
      i++;
      while (i < n && /\w/.test(code[i])) i++;
      prev = 'v';
      continue;
    }
    if (c === '(' || c === '[' || c === '{') stack.push(c);
    else if (c === ')' || c === ']' || c === '}') {
      const open = stack.pop();
      if (open === '${') { i++; template(); continue; }
      // The brace that closes a class or function body at the top
      // level ends its declaration.
      if (open === '{' && stack.length === 0 && body !== null) { body.end = i + 1; body = null; }
      // A block at the top level may end a statement.
      if (open === '{' && stack.length === 0) ends.push(i + 1);
    } else if (c === ';' && stack.length === 0) ends.push(i + 1);
    prev = c;
    i++;
  }
  return { decls, ends, idents };
}

// declName returns the name a class or function declaration at pos
// declares, and where the keyword ends.
function declName(code, d) {
  const m = /^(?:async\s+)?(?:class|function\s*\*?)\s*([A-Za-z_$\u0080-\uffff][\w$\u0080-\uffff]*)/.exec(code.slice(d.pos));
  return m ? m[1] : undefined;
}

// toGlobal rewrites the top-level let, const and class declarations as
// var ones (and, with functions too, for top-level await), so a name
// declared in one entry is still there in the next: each entry is a
// separate evaluation, whose lexical scope would end with it.
function toGlobal(code, scanned, functions) {
  let out = '';
  let last = 0;
  for (const d of scanned.decls) {
    if (d.kw === 'let' || d.kw === 'const') {
      out += `${code.slice(last, d.pos)}var`;
      last = d.pos + d.kw.length;
    } else if (d.kw === 'class' || (functions && d.kw !== 'var')) {
      const name = declName(code, d);
      if (name === undefined || d.end === undefined) continue;
      // As an expression it needs a ';' where the declaration ended.
      out += `${code.slice(last, d.pos)}var ${name} = ${code.slice(d.pos, d.end)};`;
      last = d.end;
    }
  }
  return out + code.slice(last);
}

function compiles(fn) {
  try {
    fn();
    return true;
  } catch {
    return false;
  }
}

// awaitBody turns code with top-level await into the body of an async
// function whose declarations land on the global object (through the
// `with` scope the caller supplies) and which returns the value of the
// last expression statement, as Node's REPL does.
function awaitBody(code, scanned) {
  const body = toGlobal(code, scanned, true);
  const rescanned = scan(body);
  const ends = [0, ...rescanned.ends];
  for (let k = ends.length - 1; k >= 0; k--) {
    const tail = body.slice(ends[k]).replace(/[\s;]+$/, '');
    if (tail.trim() === '') continue;
    const candidate = `${body.slice(0, ends[k])}\nreturn (${tail}\n);`;
    if (compiles(() => new AsyncFunction('__replScope', `with (__replScope) {\n${candidate}\n}`))) return candidate;
    break;
  }
  return body;
}

// awaitScope is the `with` object of a top-level-await entry: the names
// the entry uses read and write the global object, so its declarations
// outlive it; a name no global has is a ReferenceError, as it would be.
function awaitScope(idents) {
  return new ProxyCtor({ __proto__: null }, {
    has: (_, k) => typeof k === 'string' && idents.has(k) && k !== '__replScope',
    get: (_, k) => {
      if (typeof k !== 'string') return undefined;
      if (k in globalThis) return globalThis[k];
      throw new ReferenceError(`${k} is not defined`);
    },
    set: (_, k, v) => { globalThis[k] = v; return true; },
  });
}

function incomplete(err, code) {
  if (!(err instanceof SyntaxErrorCtor)) return false;
  if (/Unexpected end of input|Unterminated template|missing \) after/.test(err.message)) return true;
  // An unterminated string is only incomplete when the line ends in a
  // backslash continuation.
  return /Invalid or unexpected token/.test(err.message) && /\\$/.test(code);
}

function interruptedError() {
  const e = new ErrorCtor('Script execution was interrupted by `SIGINT`');
  e.code = 'ERR_SCRIPT_EXECUTION_INTERRUPTED';
  return e;
}

// Recoverable is what a custom eval passes its callback for an entry
// that is incomplete: the REPL then waits for more lines.
class Recoverable extends SyntaxErrorCtor {
  constructor(err) {
    super();
    this.err = err;
  }
}

// writer is the default way results are shown; its options are public
// (repl.writer.options), as in node.
function writer(value) {
  return require('./util.js').inspect(value, writer.options);
}
writer.options = { showProxy: true };

// defaultCommands are node's dot-commands that a session without a
// filesystem editor can carry out.
function defaultCommands() {
  const commands = { __proto__: null };
  commands.break = {
    help: 'Sometimes you get stuck, this gets you out',
    action() { this.clearBufferedCommand(); this.displayPrompt(); },
  };
  commands.clear = {
    help: 'Alias for .break',
    action() { this.clearBufferedCommand(); this.displayPrompt(); },
  };
  commands.exit = {
    help: 'Exit the REPL',
    action() { this.exitCommand = true; this.close(); },
  };
  commands.help = {
    help: 'Print this help message',
    action() {
      const names = Object.keys(this.commands).sort();
      const width = Math.max(...names.map((n) => n.length));
      for (const name of names) {
        const cmd = this.commands[name];
        this.output.write(`.${name}${cmd.help ? ' '.repeat(width - name.length + 3) + cmd.help : ''}\n`);
      }
      this.output.write('\nPress Ctrl+C to abort current expression, Ctrl+D to exit the REPL\n');
      this.displayPrompt();
    },
  };
  return commands;
}

class REPLServer extends EventEmitter {
  constructor(opts = {}, stream, evalFn, useGlobal, ignoreUndefined, replMode) {
    super();
    // node's older signature: (prompt, stream, eval, useGlobal,
    // ignoreUndefined, replMode).
    if (opts === null || typeof opts !== 'object') {
      opts = { prompt: opts, input: stream, output: stream, eval: evalFn, useGlobal, ignoreUndefined, replMode };
    }
    const { process } = require('./process.js');
    this.input = opts.input || process.stdin;
    this.output = opts.output || process.stdout;
    this._prompt = opts.prompt === undefined ? '> ' : String(opts.prompt);
    this.terminal = opts.terminal === undefined ? !!this.output.isTTY : !!opts.terminal;
    this.useColors = opts.useColors === undefined
      ? this.terminal && (typeof this.output.getColorDepth === 'function' ? this.output.getColorDepth() > 2 : true)
      : !!opts.useColors;
    this.context = globalThis;
    this.buffer = '';
    this.sawSIGINT = false;
    this.closed = false;
    this.running = false;
    this.awaiting = null; // the token of the entry whose await is pending
    this.underscoreAssigned = false;
    this.ignoreUndefined = !!opts.ignoreUndefined;
    this.commands = defaultCommands();
    this._customEval = typeof opts.eval === 'function' ? opts.eval : null;
    this.eval = this._customEval || ((cmd, context, file, cb) => cb(null, P.indirectEval(cmd)));
    this._customWriter = typeof opts.writer === 'function';
    if (this._customWriter) this.writer = opts.writer;
    else this.writer = this.useColors ? (v) => require('./util.js').inspect(v, { ...writer.options, colors: true }) : writer;
    this._setupContext(process);
    const history = opts.history === false ? [] : this._loadHistory(process);
    const rl = require('./readline.js').createInterface({
      input: this.input, output: this.output, terminal: this.terminal, prompt: this._prompt,
      history, historySize: this._historySize, removeHistoryDuplicates: false,
    });
    this.rl = rl;
    // The server emits its lines as node's (a readline Interface) does,
    // and a 'line' emitted on it is an entry.
    rl.on('line', (line) => this.emit('line', line));
    this.on('line', (line) => this._line(line || ''));
    rl.on('close', () => this.close());
    rl.on('SIGINT', () => this._interrupt());
    rl.on('history', (h) => this._saveHistory(h));
    // The process's SIGINT arrives when ^C is typed while the terminal is
    // cooked (during an evaluation) or comes from kill; catching it is
    // also what lets replRun break a busy evaluation.
    this._onSIGINT = () => this._interrupt();
    process.on('SIGINT', this._onSIGINT);
    this.displayPrompt();
  }

  // _setupContext gives the global context node's REPL names: require
  // and module resolve from the working directory.
  _setupContext(process) {
    const Module = require('./module.js');
    const path = require('./path.js');
    const m = new Module('<repl>', null);
    m.filename = null;
    m.loaded = false;
    m.paths = Module._nodeModulePaths(path.join(process.cwd(), 'repl'));
    const req = function require(id) { return m.require(id); };
    req.resolve = (request, options) => Module._resolveFilename(request, m, false, options);
    req.resolve.paths = () => m.paths.slice();
    req.cache = Module._cache;
    req.main = undefined;
    const define = (name, value) => P.ObjectDefineProperty(globalThis, name, { value, writable: true, configurable: true, enumerable: false });
    define('module', m);
    define('require', req);
    // As in node's REPL, each builtin module is a global (`os.EOL`),
    // loaded on first use, unless the global already has that name.
    for (const name of Module.builtinModules) {
      if (name.includes('/') || name.startsWith('_') || name in globalThis) continue;
      P.ObjectDefineProperty(globalThis, name, {
        configurable: true,
        enumerable: false,
        get: () => { const v = req(name); define(name, v); return v; },
        set: (v) => define(name, v),
      });
    }
    P.ObjectDefineProperty(globalThis, '_', {
      configurable: true,
      enumerable: false,
      get: () => this.last,
      set: (v) => {
        if (!this.underscoreAssigned) {
          this.underscoreAssigned = true;
          this.output.write('Expression assignment to _ now disabled.\n');
        }
        P.ObjectDefineProperty(globalThis, '_', { value: v, writable: true, configurable: true, enumerable: true });
      },
    });
    define('_error', undefined);
  }

  _historyPath(process) {
    const env = process.env.NODE_REPL_HISTORY;
    if (env !== undefined) return env.trim() === '' ? null : env;
    const home = require('./os.js').homedir();
    return home ? require('./path.js').join(home, '.node_repl_history') : null;
  }

  _loadHistory(process) {
    const size = Number(process.env.NODE_REPL_HISTORY_SIZE);
    this._historySize = Number.isInteger(size) && size >= 0 ? Math.min(size, 100000) : 1000;
    this._historyFile = this.terminal ? this._historyPath(process) : null;
    if (!this._historyFile) return [];
    try {
      const fs = require('./fs.js');
      if (fs.statSync(this._historyFile).size > maxHistoryFile) return [];
      return fs.readFileSync(this._historyFile, 'utf8').split(/\r?\n/).filter((l) => l !== '').slice(0, this._historySize);
    } catch {
      return [];
    }
  }

  _saveHistory(history) {
    if (!this._historyFile) return;
    try {
      require('./fs.js').writeFileSync(this._historyFile, history.join('\n'), { mode: 0o600 });
    } catch {
      // Like Node, a history that cannot be written is not an error of
      // the session; it is only not kept.
      this._historyFile = null;
    }
  }

  displayPrompt() {
    if (this.closed) return;
    this.rl.setPrompt(this.buffer ? '... ' : this._prompt);
    this.rl.prompt();
  }

  setPrompt(p) { this._prompt = String(p); }
  getPrompt() { return this._prompt; }

  _interrupt() {
    if (this.closed) return;
    if (this.running) return; // the evaluation reports it
    if (this.awaiting) {
      // ^C gives up on an entry's pending await, as node's does.
      this.awaiting = null;
      this._printError(interruptedError());
      this.displayPrompt();
      return;
    }
    if (this.buffer || this.rl.line) {
      this.buffer = '';
      this.sawSIGINT = false;
      this.rl.line = '';
      this.rl.cursor = 0;
      this.output.write('\r\n');
    } else if (this.sawSIGINT) {
      this.close();
      return;
    } else {
      this.sawSIGINT = true;
      this.output.write(`${this.terminal ? '\r\n' : '\n'}(To exit, press Ctrl+C again or Ctrl+D or type .exit)\n`);
    }
    this.displayPrompt();
  }

  // defineCommand adds a dot-command: cmd is its action or { help, action }.
  defineCommand(keyword, cmd) {
    if (typeof cmd === 'function') cmd = { action: cmd };
    else require('./internal/validators.js').validateFunction(cmd.action, 'cmd.action');
    this.commands[keyword] = cmd;
  }

  clearBufferedCommand() { this.buffer = ''; }

  // write types d at the prompt, as input would.
  write(d) { this.rl.write(d); }

  // _command runs a dot-command line; false when it is not one.
  _command(line) {
    const m = /^\.([^\s]+)\s*(.*)$/.exec(line);
    if (!m || line[1] === '.' || !Number.isNaN(Number.parseFloat(line))) return false;
    const cmd = this.commands[m[1]];
    if (cmd) {
      P.ReflectApply(cmd.action, this, [m[2]]);
      return true;
    }
    if (this.buffer) return false;
    this.output.write('Invalid REPL keyword\n');
    this.displayPrompt();
    return true;
  }

  _print(value) {
    if (this.ignoreUndefined && value === undefined) return;
    this.output.write(`${this.writer(value)}\n`);
  }

  _printError(e) {
    const { inspect } = require('./util.js');
    P.ObjectDefineProperty(globalThis, '_error', { value: e, writable: true, configurable: true, enumerable: false });
    // A program's own writer shows errors too, as in node.
    let text;
    if (this._customWriter) text = this.writer(e);
    else text = e instanceof Error ? (e.stack || String(e)).split('\n')[0] : inspect(e, { colors: this.useColors });
    this.output.write(`Uncaught ${text}\n`);
  }

  _result(value) {
    if (!this.underscoreAssigned) this.last = value;
    this._print(value);
  }

  // _run evaluates fn with ^C armed to break it. It returns
  // { value } or { error }.
  _run(fn) {
    const out = {};
    const call = () => {
      try {
        out.value = fn();
      } catch (e) {
        out.error = e;
        out.threw = true;
      }
    };
    const raw = this.terminal && this.input.isRaw;
    // Cooked while it runs, so ^C is a signal that can stop a busy loop.
    if (raw) this.input.setRawMode(false);
    let interrupted = false;
    this.running = true;
    try {
      interrupted = B.replRun(call);
    } catch {
      call();
    } finally {
      this.running = false;
      if (raw && !this.closed) this.input.setRawMode(true);
    }
    if (interrupted) return { error: interruptedError(), threw: true, interrupted: true };
    return out;
  }

  _line(line) {
    this.sawSIGINT = false;
    if (line.trim().startsWith('.') && this._command(line.trim())) return;
    if (this._customEval) { this._evalWith(line); return; }
    const code = this.buffer ? `${this.buffer}\n${line}` : line;
    if (code.trim() === '') { this.buffer = ''; this.displayPrompt(); return; }
    // An object literal is an expression at the prompt, as in node.
    const wrapped = /^\s*\{/.test(code) && !/;\s*$/.test(code) ? `(${code})` : undefined;
    const src = wrapped !== undefined && compiles(() => new Function(wrapped)) ? wrapped : code;
    const scanned = scan(src);
    // A syntax error is found before anything runs, so the entry is first
    // run as a script; one that is incomplete waits for more lines, one
    // that awaits at the top level runs again as an async function.
    // The rewrite runs before ^C is armed: armed, a ^C typed while it ran
    // stopped the entry before its first statement, so a `let` it
    // declares was never made (node arms SIGINT only around running).
    const script = toGlobal(src, scanned, false);
    const r = this._run(() => P.indirectEval(script));
    if (r.threw && !r.interrupted && r.error instanceof SyntaxErrorCtor) {
      if (incomplete(r.error, src)) {
        this.buffer = code;
        this.displayPrompt();
        return;
      }
      if (scanned.idents.has('await') && compiles(() => new AsyncFunction(src))) {
        this.buffer = '';
        this._await(awaitBody(src, scanned), scanned);
        return;
      }
    }
    this.buffer = '';
    // Taken by a domain, the entry never finishes in node: no result and
    // no new prompt.
    if (r.threw && this._domainTook(r.error)) return;
    if (r.threw) this._printError(r.error);
    else this._result(r.value);
    this.displayPrompt();
  }

  // _domainTook hands an entry's error to the domain it was thrown in
  // (domain.run leaves it active), as node's REPL does; true when one of
  // its 'error' listeners took it.
  _domainTook(e) {
    const { process } = require('./process.js');
    const d = process.domain;
    return !!d && typeof d._errorHandler === 'function' && d._errorHandler(e) === true;
  }

  // _evalWith hands an entry to the program's own eval, which answers
  // through a callback: a Recoverable error asks for more lines.
  _evalWith(line) {
    const code = `${this.buffer}${line}\n`;
    let done = false;
    const finish = (err, value) => {
      if (done || this.closed) return;
      done = true;
      if (err instanceof Recoverable) {
        this.buffer = code;
        this.displayPrompt();
        return;
      }
      this.buffer = '';
      if (err) this._printError(err);
      else this._result(value);
      this.displayPrompt();
    };
    const r = this._run(() => this._customEval.call(this, code, this.context, 'REPL1', finish));
    if (r.threw) finish(r.error);
  }

  _await(body, scanned) {
    const r = this._run(() => new AsyncFunction('__replScope', `with (__replScope) {\n${body}\n}`)(awaitScope(scanned.idents)));
    if (r.threw) { this._printError(r.error); this.displayPrompt(); return; }
    // Keys typed while the promise is pending wait for it (^C excepted).
    this.rl.pause();
    const token = {};
    this.awaiting = token;
    const settle = (report) => (x) => {
      if (this.closed || this.awaiting !== token) return;
      this.awaiting = null;
      report(x);
      this.displayPrompt(); // which resumes
    };
    P.ReflectApply(promiseThen, r.value, [settle((v) => this._result(v)), settle((e) => this._printError(e))]);
  }

  close() {
    if (this.closed) return;
    this.closed = true;
    const { process } = require('./process.js');
    process.removeListener('SIGINT', this._onSIGINT);
    this.rl.close();
    if (typeof this.input.destroy === 'function') this.input.destroy();
    this.emit('exit');
  }
}

function start(opts, ...rest) {
  const { process } = require('./process.js');
  // node's own REPL greets first.
  if (opts === undefined) process.stdout.write(`Welcome to Node.js ${process.version}.\nType ".help" for more information.\n`);
  const r = new REPLServer(opts, ...rest);
  if (opts === undefined) {
    // On a terminal ^D and a second ^C leave the prompt's line; .exit
    // is on its own line already, and a pipe's end needs none.
    r.on('exit', () => { if (r.terminal && !r.exitCommand) process.stdout.write('\n'); process.exit(0); });
  }
  return r;
}

module.exports = { start, REPLServer, Recoverable, writer, REPL_MODE_SLOPPY: Symbol('repl-sloppy'), REPL_MODE_STRICT: Symbol('repl-strict') };
