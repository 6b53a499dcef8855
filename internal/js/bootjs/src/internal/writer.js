'use strict';
// Asynchronous writes of a kernel descriptor (child pipes, sockets): a Go
// goroutine writes the bytes and the loop reports completion, so a full
// pipe or a slow peer never blocks the isolate.
const { B, giveBytes } = require('./bridge.js');
const loop = require('./loop.js');
const { fromBridge } = require('./errors.js');

const writes = new Map();
let nextWrite = 1;

loop.onEvent('write', (id, code) => {
  const cb = writes.get(id);
  writes.delete(id);
  if (cb) cb(code ? fromBridge(code, 'write') : null);
});

// write writes all of u8 to fd and calls cb(err) when done.
function write(fd, u8, cb) {
  const id = nextWrite++;
  writes.set(id, cb);
  try {
    B.writeAsync(fd, giveBytes(u8), id);
  } catch (e) {
    writes.delete(id);
    throw e;
  }
}

module.exports = { write };
