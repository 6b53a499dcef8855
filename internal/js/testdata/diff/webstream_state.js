// Node's stream helpers on WHATWG streams (isReadable, isErrored,
// isDisturbed, finished) and a fetch whose body arrives in pieces after
// its headers: undici waits for the body through stream.finished on the
// web stream, and a missing [kIsClosedPromise] once made it abort the
// response (the body read never settled; the process exited 0).
'use strict';
const stream = require('stream');
const net = require('net');

const open = new ReadableStream({ pull() {} });
console.log('open', stream.isReadable(open), stream.isErrored(open), stream.isDisturbed(open));
const failed = new ReadableStream({ start(c) { c.error(new Error('boom')); } });
const closed = new ReadableStream({ start(c) { c.close(); } });
const ws = new WritableStream();
console.log('writable', stream.isWritable(ws), stream.isErrored(ws));

(async () => {
  await new Promise((res) => setTimeout(res, 1));
  console.log('failed', stream.isReadable(failed), stream.isErrored(failed));
  console.log('closed', stream.isReadable(closed), stream.isErrored(closed));
  await new Promise((res) => stream.finished(closed, (e) => { console.log('finished closed', e); res(); }));
  await new Promise((res) => stream.finished(failed, (e) => { console.log('finished failed', e && e.message); res(); }));
  const later = new ReadableStream({ start(c) { setTimeout(() => c.close(), 5); } });
  await new Promise((res) => stream.finished(later, (e) => { console.log('finished later', e); res(); }));
  const r = later.getReader();
  console.log('read after close', JSON.stringify(await r.read()));
  await stream.promises.finished(new ReadableStream({ start(c) { c.close(); } }));
  console.log('promises.finished ok');

  // A server that sends the headers, then the body in two writes.
  const srv = net.createServer((c) => {
    c.once('data', () => {
      c.write('HTTP/1.0 200 OK\r\nContent-Length: 40000\r\n\r\n');
      setTimeout(() => {
        c.write(Buffer.alloc(20000, 97));
        setTimeout(() => c.end(Buffer.alloc(20000, 98)), 5);
      }, 5);
    });
  });
  await new Promise((res) => srv.listen(0, '127.0.0.1', res));
  const url = 'http://127.0.0.1:' + srv.address().port + '/';
  const res1 = await fetch(url);
  const text = await res1.text();
  console.log('fetch text', res1.status, text.length, text[0], text[39999]);
  const res2 = await fetch(url);
  let n = 0;
  for await (const chunk of res2.body) n += chunk.length;
  console.log('fetch body chunks', n);
  srv.close();
})();
