'use strict';
// stream: readable-stream, Node's streams for other engines.
const rs = require('readable-stream');
const Stream = rs.Stream || rs;
const out = rs;
if (!out.promises) {
  out.promises = {
    pipeline: (...a) => new Promise((res, rej) => rs.pipeline(...a, (e, v) => e ? rej(e) : res(v))),
    finished: (s, o) => new Promise((res, rej) => rs.finished(s, o || {}, (e) => e ? rej(e) : res())),
  };
}

// duplexPair (Node 22.6) returns two Duplex streams joined back to back:
// what one writes the other reads. A write's callback waits until the
// other side reads, so the pair holds at most one chunk in flight.
const kCallback = Symbol('callback');
const kOther = Symbol('otherSide');
class DuplexSide extends rs.Duplex {
  constructor(options) {
    super(options);
    this[kCallback] = null;
    this[kOther] = null;
  }

  _read() {
    const cb = this[kOther][kCallback];
    if (cb) {
      this[kOther][kCallback] = null;
      cb();
    }
  }

  _write(chunk, encoding, cb) {
    if (chunk.length === 0) {
      process.nextTick(cb);
      return;
    }
    this[kOther].push(chunk);
    this[kCallback] = cb;
  }

  _final(cb) {
    this[kOther].on('end', cb);
    this[kOther].push(null);
  }
}
if (!out.duplexPair) {
  out.duplexPair = function duplexPair(options) {
    const a = new DuplexSide(options);
    const b = new DuplexSide(options);
    a[kOther] = b;
    b[kOther] = a;
    return [a, b];
  };
}
module.exports = out;
void Stream;
