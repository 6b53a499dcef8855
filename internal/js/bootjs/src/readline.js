'use strict';
// readline: line splitting over a readable stream and, on a terminal
// (terminal: true, the default when output is a TTY), Node's line editor:
// the input in raw mode, keys decoded from their escape sequences, the
// line redrawn after each edit, and a history recalled with up/down.
const EventEmitter = require('./events.js');

// maxLine bounds a line being edited, so a flood of keys costs bounded
// memory and redraws.
const maxLine = 1 << 20;

// keys splits terminal input into keys: a printable run stays one key
// (a paste is inserted at once), an escape sequence or control character
// is one key. A trailing partial escape sequence is returned in rest.
function keys(s) {
  const out = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i];
    if (c === '\x1b') {
      if (i + 1 >= s.length) return { out, rest: s.slice(i) };
      const d = s[i + 1];
      if (d === '[' || d === 'O') {
        let j = i + 2;
        while (j < s.length && /[0-9;]/.test(s[j])) j++;
        if (j >= s.length) return { out, rest: s.slice(i) };
        out.push(s.slice(i, j + 1));
        i = j + 1;
      } else {
        out.push(s.slice(i, i + 2));
        i += 2;
      }
      continue;
    }
    if (c < ' ' || c === '\x7f') { out.push(c); i++; continue; }
    let j = i;
    while (j < s.length && s[j] >= ' ' && s[j] !== '\x7f' && s[j] !== '\x1b') j++;
    out.push(s.slice(i, j));
    i = j;
  }
  return { out, rest: '' };
}

class Interface extends EventEmitter {
  constructor(input, output, completer, terminal) {
    super();
    let opts = {};
    if (input && input.input) { opts = input; ({ input, output, terminal } = input); }
    this.input = input;
    this.output = output;
    this.terminal = terminal === undefined ? !!(output && output.isTTY) : !!terminal;
    this.closed = false;
    this.paused = false;
    this.line = '';
    this.cursor = 0;
    this.history = Array.isArray(opts.history) ? opts.history.slice() : [];
    this.historySize = opts.historySize === undefined ? 30 : Math.max(0, Number(opts.historySize) | 0);
    this.removeHistoryDuplicates = !!opts.removeHistoryDuplicates;
    this._historyIndex = -1;
    this._savedLine = '';
    this._rows = 0; // the row of the cursor in the last drawing, from the prompt's
    this._keyRest = '';
    this._queued = [];
    this._buf = '';
    this._prompt = opts.prompt === undefined ? '> ' : String(opts.prompt);
    this._questions = [];
    const { StringDecoder } = require('./string_decoder.js');
    const dec = new StringDecoder('utf8');
    this._onData = (chunk) => {
      const text = typeof chunk === 'string' ? chunk : dec.write(chunk);
      if (this.terminal) { this._ttyWrite(text); return; }
      this._buf += text;
      this._lines();
    };
    // _lines emits the complete lines buffered; a pause (the REPL
    // awaiting an entry) holds the rest until resume.
    this._lines = () => {
      let i;
      while (!this.paused && !this.closed && (i = this._buf.search(/\r?\n/)) >= 0) {
        const line = this._buf.slice(0, i);
        this._buf = this._buf.slice(this._buf[i] === '\r' ? i + 2 : i + 1);
        this._line(line);
      }
    };
    this._onEnd = () => {
      this._ended = true;
      if (this.paused) return; // resume finishes
      if (this._buf.length > 0) { const l = this._buf; this._buf = ''; this._line(l); }
      this.close();
    };
    if (this.terminal && typeof input.setRawMode === 'function') input.setRawMode(true);
    input.on('data', this._onData);
    input.on('end', this._onEnd);
    if (typeof input.resume === 'function') input.resume();
  }

  _columns() {
    const c = this.output && this.output.columns;
    return c > 0 ? c : 80;
  }

  // _refreshLine redraws the prompt and the line from the prompt's first
  // row and puts the cursor back, as Node's does.
  _refreshLine() {
    if (!this.output) return;
    const cols = this._columns();
    const text = this._prompt + this.line;
    const at = this._prompt.length + this.cursor;
    let s = '';
    if (this._rows > 0) s += `\x1b[${this._rows}A`;
    s += `\r${text}\x1b[0J`;
    const endRow = Math.floor(text.length / cols);
    const row = Math.floor(at / cols);
    // A line that fills its last row exactly leaves the cursor there; a
    // newline moves it to the next row as the terminal would.
    if (text.length > 0 && text.length % cols === 0) s += '\r\n';
    if (endRow > row) s += `\x1b[${endRow - row}A`;
    s += `\x1b[${(at % cols) + 1}G`;
    this._rows = row;
    this.output.write(s);
  }

  _insert(str) {
    const room = maxLine - this.line.length;
    if (room <= 0) return;
    str = str.slice(0, room);
    const atEnd = this.cursor === this.line.length;
    this.line = this.line.slice(0, this.cursor) + str + this.line.slice(this.cursor);
    this.cursor += str.length;
    const cols = this._columns();
    if (atEnd && this.output && (this._prompt.length + this.line.length) % cols !== 0) {
      // Typing at the end only needs the new text written.
      this.output.write(str);
      this._rows = Math.floor((this._prompt.length + this.cursor) / cols);
    } else {
      this._refreshLine();
    }
  }

  _historyMove(dir) {
    if (this.history.length === 0) return;
    if (this._historyIndex === -1) this._savedLine = this.line;
    const next = this._historyIndex + dir;
    if (next < -1 || next >= this.history.length) return;
    this._historyIndex = next;
    this.line = next === -1 ? this._savedLine : this.history[next];
    this.cursor = this.line.length;
    this._refreshLine();
  }

  _addHistory(line) {
    if (line.trim() === '' || this.historySize === 0) return;
    if (this.removeHistoryDuplicates) {
      const i = this.history.indexOf(line);
      if (i >= 0) this.history.splice(i, 1);
    }
    if (this.history[0] !== line) this.history.unshift(line);
    if (this.history.length > this.historySize) this.history.length = this.historySize;
    this.emit('history', this.history);
  }

  // _wordLeft and _wordRight find Node's word boundaries: after any
  // spaces, a run of word characters or a run of other non-spaces.
  _wordLeft() {
    let i = this.cursor;
    while (i > 0 && /\s/.test(this.line[i - 1])) i--;
    const word = i > 0 && /\w/.test(this.line[i - 1]);
    while (i > 0 && !/\s/.test(this.line[i - 1]) && /\w/.test(this.line[i - 1]) === word) i--;
    return i;
  }

  _wordRight() {
    let i = this.cursor;
    while (i < this.line.length && /\s/.test(this.line[i])) i++;
    const word = i < this.line.length && /\w/.test(this.line[i]);
    while (i < this.line.length && !/\s/.test(this.line[i]) && /\w/.test(this.line[i]) === word) i++;
    return i;
  }

  _moveTo(i) {
    this.cursor = Math.max(0, Math.min(this.line.length, i));
    this._refreshLine();
  }

  _ttyWrite(text) {
    const { out, rest } = keys(this._keyRest + text);
    this._keyRest = rest.slice(0, 16);
    for (const k of out) {
      if (this.closed) return;
      // ^C is not held: it is how a pending entry is given up.
      if (this.paused && !(k === '\x03' && this.listenerCount('SIGINT') > 0)) { this._queued.push(k); continue; }
      this._key(k);
    }
  }

  _key(k) {
    switch (k) {
      case '\r': case '\n': {
        const line = this.line;
        this._addHistory(line);
        this._historyIndex = -1;
        this.line = '';
        this.cursor = 0;
        this._rows = 0;
        if (this.output) this.output.write('\r\n');
        this._line(line);
        return;
      }
      case '\x03': // ^C
        if (this.listenerCount('SIGINT') > 0) this.emit('SIGINT');
        else { this.line = ''; this.cursor = 0; this.close(); }
        return;
      case '\x04': // ^D: end of input on an empty line, else delete right
        if (this.line === '') { this.close(); return; }
        if (this.cursor < this.line.length) {
          this.line = this.line.slice(0, this.cursor) + this.line.slice(this.cursor + 1);
          this._refreshLine();
        }
        return;
      case '\x7f': case '\b':
        if (this.cursor > 0) {
          this.line = this.line.slice(0, this.cursor - 1) + this.line.slice(this.cursor);
          this.cursor--;
          this._refreshLine();
        }
        return;
      case '\x1b[3~':
        if (this.cursor < this.line.length) {
          this.line = this.line.slice(0, this.cursor) + this.line.slice(this.cursor + 1);
          this._refreshLine();
        }
        return;
      case '\x01': case '\x1b[H': case '\x1bOH': case '\x1b[1~': this._moveTo(0); return;
      case '\x05': case '\x1b[F': case '\x1bOF': case '\x1b[4~': this._moveTo(this.line.length); return;
      case '\x02': case '\x1b[D': case '\x1bOD': this._moveTo(this.cursor - 1); return;
      case '\x06': case '\x1b[C': case '\x1bOC': this._moveTo(this.cursor + 1); return;
      case '\x1bb': case '\x1b[1;5D': this._moveTo(this._wordLeft()); return;
      case '\x1bf': case '\x1b[1;5C': this._moveTo(this._wordRight()); return;
      case '\x10': case '\x1b[A': case '\x1bOA': this._historyMove(1); return;
      case '\x0e': case '\x1b[B': case '\x1bOB': this._historyMove(-1); return;
      case '\x15': // ^U: delete to the start of the line
        this.line = this.line.slice(this.cursor);
        this._moveTo(0);
        return;
      case '\x0b': // ^K: delete to the end of the line
        this.line = this.line.slice(0, this.cursor);
        this._refreshLine();
        return;
      case '\x17': { // ^W: delete the word before the cursor
        const i = this._wordLeft();
        this.line = this.line.slice(0, i) + this.line.slice(this.cursor);
        this._moveTo(i);
        return;
      }
      case '\x0c': // ^L: clear the screen
        if (this.output) this.output.write('\x1b[H\x1b[2J');
        this._rows = 0;
        this._refreshLine();
        return;
      case '\t':
        this._insert('  ');
        return;
    }
    if (k[0] >= ' ' && k[0] !== '\x7f') this._insert(k);
  }

  _line(line) {
    const q = this._questions.shift();
    if (q && this._questionPrompt !== undefined) { this._prompt = this._questionPrompt; this._questionPrompt = undefined; }
    if (q) q(line); else this.emit('line', line);
  }
  setPrompt(p) { this._prompt = String(p); }
  getPrompt() { return this._prompt; }
  prompt() {
    if (this.output) {
      if (this.terminal) { this._rows = 0; this._refreshLine(); } else this.output.write(this._prompt);
    }
    // Input held while paused is read after the prompt that asks for it.
    if (this.paused) this.resume();
  }
  question(query, opts, cb) {
    if (typeof opts === 'function') cb = opts;
    if (this.terminal) {
      if (this._questionPrompt === undefined) this._questionPrompt = this._prompt;
      this._prompt = String(query);
      this.prompt();
    } else if (this.output) this.output.write(query);
    this._questions.push(cb);
  }
  // write is input typed by the program: keys on a terminal, else text
  // read as lines, as if it came from input.
  write(d) {
    if (this.closed) return;
    if (this.paused) this.resume();
    if (this.terminal) { this._ttyWrite(String(d)); return; }
    this._buf += String(d);
    this._lines();
  }
  pause() {
    if (this.paused) return this;
    this.paused = true;
    if (!this.terminal) this.input.pause();
    this.emit('pause');
    return this;
  }
  resume() {
    if (!this.paused) return this;
    this.paused = false;
    if (!this.terminal) this.input.resume();
    this.emit('resume');
    // Keys typed while paused are handled now, in order.
    while (!this.paused && !this.closed && this._queued.length) this._key(this._queued.shift());
    if (!this.terminal) this._lines();
    if (this._ended && !this.paused) this._onEnd();
    return this;
  }
  close() {
    if (this.closed) return;
    this.closed = true;
    if (this.terminal && typeof this.input.setRawMode === 'function') {
      try { this.input.setRawMode(false); } catch { /* the terminal is gone */ }
    }
    this.input.removeListener('data', this._onData);
    this.input.removeListener('end', this._onEnd);
    if (typeof this.input.pause === 'function') this.input.pause();
    this.emit('close');
  }
  [Symbol.asyncIterator]() {
    const lines = [];
    let wake = null;
    let done = false;
    this.on('line', (l) => { lines.push(l); if (wake) { wake(); wake = null; } });
    this.on('close', () => { done = true; if (wake) { wake(); wake = null; } });
    return {
      next: async () => {
        while (!lines.length && !done) await new Promise((r) => { wake = r; });
        if (lines.length) return { value: lines.shift(), done: false };
        return { value: undefined, done: true };
      },
      return: async () => { this.close(); return { value: undefined, done: true }; },
      [Symbol.asyncIterator]() { return this; },
    };
  }
}
function createInterface(input, output, completer, terminal) { return new Interface(input, output, completer, terminal); }
const promises = {
  Interface,
  createInterface(input, output, completer, terminal) {
    const rl = createInterface(input, output, completer, terminal);
    const q = rl.question.bind(rl);
    rl.question = (query) => new Promise((r) => q(query, r));
    return rl;
  },
};
module.exports = {
  Interface, createInterface, promises,
  clearLine: (s, d, cb) => { if (cb) cb(); return true; }, clearScreenDown: (s, cb) => { if (cb) cb(); return true; },
  cursorTo: (s, x, y, cb) => { if (typeof y === 'function') y(); else if (cb) cb(); return true; },
  moveCursor: (s, dx, dy, cb) => { if (cb) cb(); return true; },
  emitKeypressEvents: () => {},
};
