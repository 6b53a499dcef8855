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
module.exports = out;
void Stream;
