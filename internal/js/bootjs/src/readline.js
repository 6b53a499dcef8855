'use strict';
// readline: line splitting over a readable stream.
const EventEmitter = require('./events.js');
class Interface extends EventEmitter {
  constructor(input, output) {
    super();
    if (input && input.input) ({ input, output } = input);
    this.input = input;
    this.output = output;
    this.closed = false;
    this.line = '';
    this._buf = '';
    this._prompt = '> ';
    this._questions = [];
    const { StringDecoder } = require('./string_decoder.js');
    const dec = new StringDecoder('utf8');
    this._onData = (chunk) => {
      this._buf += typeof chunk === 'string' ? chunk : dec.write(chunk);
      let i;
      while ((i = this._buf.search(/\r?\n/)) >= 0) {
        const line = this._buf.slice(0, i);
        this._buf = this._buf.slice(this._buf[i] === '\r' ? i + 2 : i + 1);
        this._line(line);
      }
    };
    this._onEnd = () => {
      if (this._buf.length > 0) { const l = this._buf; this._buf = ''; this._line(l); }
      this.close();
    };
    input.on('data', this._onData);
    input.on('end', this._onEnd);
    if (typeof input.resume === 'function') input.resume();
  }
  _line(line) {
    const q = this._questions.shift();
    if (q) q(line); else this.emit('line', line);
  }
  setPrompt(p) { this._prompt = p; }
  getPrompt() { return this._prompt; }
  prompt() { if (this.output) this.output.write(this._prompt); }
  question(query, opts, cb) {
    if (typeof opts === 'function') cb = opts;
    if (this.output) this.output.write(query);
    this._questions.push(cb);
  }
  write(d) { if (this.output) this.output.write(d); }
  pause() { this.input.pause(); this.emit('pause'); return this; }
  resume() { this.input.resume(); this.emit('resume'); return this; }
  close() {
    if (this.closed) return;
    this.closed = true;
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
function createInterface(input, output) { return new Interface(input, output); }
const promises = {
  Interface,
  createInterface(input, output) {
    const rl = createInterface(input, output);
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
