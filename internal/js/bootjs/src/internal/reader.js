'use strict';
// Asynchronous reads of a kernel descriptor (stdin, child pipes). A Go
// goroutine reads one chunk at a time and waits for the loop to deliver
// it before reading the next, so memory stays bounded; pause() stops
// reading until resume().
const { B, takeBytes } = require('./bridge.js');
const loop = require('./loop.js');
const { fromBridge } = require('./errors.js');

const handles = new Map();
let nextHandle = 1;

// newHandle returns a read-handle id no other reader uses: the bridge
// keeps one table of reads for this module and dgram's receivers.
function newHandle() { return nextHandle++; }

function start(fd, onData, onError) {
  const h = nextHandle++;
  handles.set(h, { onData, onError, paused: false });
  B.readStart(fd, h);
  return h;
}
// readOnce reads fd once, up to length bytes, without blocking the loop:
// cb(err) or cb(null, chunk), chunk null at the end of the file.
function readOnce(fd, length, cb) {
  const h = nextHandle++;
  handles.set(h, { onData: (chunk) => cb(null, chunk), onError: cb, paused: false, once: true });
  try {
    B.readOnce(fd, h, length);
  } catch (e) {
    handles.delete(h);
    require('../process.js').process.nextTick(cb, fromBridge(e, 'read'));
  }
}
function pause(h) { const s = handles.get(h); if (s && !s.paused) { s.paused = true; B.readPause(h, true); } }
function resume(h) { const s = handles.get(h); if (s && s.paused) { s.paused = false; B.readPause(h, false); } }
function stop(h) { if (handles.delete(h)) B.readStop(h); }
function ref(h, on) { if (handles.has(h)) B.readRef(h, on); }

loop.onEvent('data', (h, n, code) => {
  const s = handles.get(h);
  if (!s) return;
  if (code) {
    handles.delete(h);
    s.onError(fromBridge(code, 'read'));
    return;
  }
  if (n === 0) {
    handles.delete(h);
    s.onData(null);
    return;
  }
  if (s.once) handles.delete(h);
  const { Buffer } = require('../buffer.js');
  s.onData(takeBytes(n, (k) => Buffer.allocUnsafe(k)));
});

module.exports = { newHandle, start, readOnce, pause, resume, stop, ref };
