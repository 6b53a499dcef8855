'use strict';
// repl: node's interactive read-eval-print loop, started by `node` with
// no script on a terminal. The kernel's line discipline edits the line
// (canonical mode: echo, erase, ^U, ^D); the REPL evaluates each line in
// the one global context, prints the result with util.inspect, keeps
// `_`, continues incomplete input on "... " lines, and handles .exit,
// .help, .break, ^C (SIGINT) and ^D (end of input).
const EventEmitter = require('./events.js');
const P = require('./internal/primordials.js');

// toGlobal turns top-level let, const and class declarations into var
// ones, so a name declared on one line is still there on the next (each
// line is a separate global eval, whose lexical scope would end with it).
function toGlobal(code) {
  return code.replace(/^(\s*)(?:let|const)(\s+[A-Za-z_$[{])/gm, '$1var$2')
    .replace(/^(\s*)class\s+([A-Za-z_$][\w$]*)/gm, '$1var $2 = class $2');
}

function incomplete(err) {
  return err instanceof SyntaxError && /Unexpected end of input|Unterminated template|missing \) after/.test(err.message);
}

class REPLServer extends EventEmitter {
  constructor(opts = {}) {
    super();
    if (typeof opts === 'string') opts = { prompt: opts };
    const { process } = require('./process.js');
    this.input = opts.input || process.stdin;
    this.output = opts.output || process.stdout;
    this._prompt = opts.prompt === undefined ? '> ' : String(opts.prompt);
    this.context = globalThis;
    this.buffer = '';
    this.sawSIGINT = false;
    this.closed = false;
    const rl = require('./readline.js').createInterface({ input: this.input, output: this.output });
    this.rl = rl;
    rl.on('line', (line) => this._line(line));
    rl.on('close', () => this.close());
    this._onSIGINT = () => this._interrupt();
    process.on('SIGINT', this._onSIGINT);
    this.displayPrompt();
  }

  displayPrompt() { this.output.write(this.buffer ? '... ' : this._prompt); }
  setPrompt(p) { this._prompt = String(p); }
  getPrompt() { return this._prompt; }

  _interrupt() {
    if (this.buffer) {
      this.buffer = '';
      this.output.write('\n');
    } else if (this.sawSIGINT) {
      this.close();
      return;
    } else {
      this.sawSIGINT = true;
      this.output.write('\n(To exit, press Ctrl+C again or Ctrl+D or type .exit)\n');
    }
    this.displayPrompt();
  }

  _command(cmd) {
    switch (cmd) {
      case '.exit':
        this.close();
        return true;
      case '.break':
      case '.clear':
        this.buffer = '';
        return true;
      case '.help':
        this.output.write('.break    Sometimes you get stuck, this gets you out\n.clear    Alias for .break\n.exit     Exit the REPL\n.help     Print this help message\n\nPress Ctrl+C to abort current expression, Ctrl+D to exit the REPL\n');
        return true;
    }
    return false;
  }

  _line(line) {
    this.sawSIGINT = false;
    if (!this.buffer && line.trim().startsWith('.') && this._command(line.trim())) {
      if (!this.closed) this.displayPrompt();
      return;
    }
    const code = this.buffer ? `${this.buffer}\n${line}` : line;
    if (code.trim() === '') { this.buffer = ''; this.displayPrompt(); return; }
    const { inspect } = require('./util.js');
    let result;
    try {
      // An object literal is an expression at the prompt, as in node.
      const src = /^\s*\{/.test(code) && !/;\s*$/.test(code) ? `(${code})` : code;
      try {
        result = P.indirectEval(toGlobal(src));
      } catch (e) {
        if (src !== code && e instanceof SyntaxError) result = P.indirectEval(toGlobal(code));
        else throw e;
      }
      this.buffer = '';
      globalThis._ = result;
      this.output.write(`${inspect(result, { colors: false })}\n`);
    } catch (e) {
      if (incomplete(e)) {
        this.buffer = code;
      } else {
        this.buffer = '';
        this.output.write(`Uncaught ${e instanceof Error ? (e.stack || String(e)).split('\n')[0] : inspect(e)}\n`);
      }
    }
    this.displayPrompt();
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

function start(opts) {
  const r = new REPLServer(opts);
  if (opts === undefined) {
    const { process } = require('./process.js');
    r.on('exit', () => { process.stdout.write('\n'); process.exit(0); });
  }
  return r;
}

module.exports = { start, REPLServer };
