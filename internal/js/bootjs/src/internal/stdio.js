'use strict';
// process.stdout, process.stderr and process.stdin as streams over the
// kernel's descriptors 0-2. Writes are synchronous, as Node's are for
// files and pipes on Linux.
const { B, giveBytes, asU8 } = require('./bridge.js');
const { fromBridge } = require('./errors.js');
const P = require('./primordials.js');

function writeAll(fd, chunk, encoding) {
  if (typeof chunk === 'string') {
    if (encoding && encoding !== 'utf8' && encoding !== 'utf-8') chunk = require('../buffer.js').Buffer.from(chunk, encoding);
    else { B.write(fd, chunk); return; }
  }
  const u8 = asU8(chunk);
  let off = 0;
  while (off < u8.length) {
    const part = u8.subarray(off, off + 256 * 1024);
    const n = giveBytes(part);
    off += B.writeScratch(fd, n, -1);
  }
}

function createWritable(fd) {
  const { Writable } = require('../stream.js');
  const w = new Writable({
    decodeStrings: false,
    write(chunk, encoding, cb) {
      try {
        writeAll(fd, chunk, encoding);
      } catch (e) {
        const err = fromBridge(e, 'write');
        if (err.code === 'EPIPE') { cb(); return; }
        cb(err);
        return;
      }
      cb();
    },
  });
  w.fd = fd;
  w._type = 'pipe';
  w._isStdio = true;
  w.isTTY = false;
  w.destroySoon = w.destroy;
  // Node's dummyDestroy: stdout and stderr cannot be destroyed; a destroy
  // is observable ('close') and the stream stays writable.
  w._destroy = function dummyDestroy(err, cb) {
    cb(err);
    this._undestroy();
    if (!this._writableState.emitClose) process.nextTick(() => this.emit('close'));
  };
  w.getColorDepth = () => 1;
  w.hasColors = () => false;
  w.columns = undefined;
  const tty = require('../tty.js');
  if (tty.isatty(fd)) tty.decorateWritable(w, fd);
  return w;
}

function createReadable(fd) {
  const { Readable } = require('../stream.js');
  const reader = require('./reader.js');
  let handle = null;
  let unrefd = false;
  const r = new Readable({
    highWaterMark: 64 * 1024,
    read() {
      if (handle === null) {
        handle = reader.start(fd, (chunk) => {
          if (chunk === null) { handle = -1; r.push(null); return; }
          if (!r.push(chunk)) reader.pause(handle);
        }, (err) => r.destroy(err));
      } else if (handle !== -1) {
        // pipe() resumes a paused source by reading (flowing again),
        // not by resume(); a read-ahead of a paused one keeps it unref'd.
        if (!unrefd && !r.isPaused()) reader.ref(handle, true);
        reader.resume(handle);
      }
    },
    destroy(err, cb) {
      if (handle !== null && handle !== -1) reader.stop(handle);
      cb(err);
    },
  });
  r.fd = fd;
  r.isTTY = false;
  r.setRawMode = () => r;
  r.ref = () => { unrefd = false; if (handle > 0) reader.ref(handle, true); return r; };
  r.unref = () => { unrefd = true; if (handle > 0) reader.ref(handle, false); return r; };
  // As node's stdin (readStop): a paused stream does not keep the
  // process alive, so a script that reads a line and pauses (readline's
  // close) exits.
  const { pause, resume } = Readable.prototype;
  r.pause = function () {
    P.ReflectApply(pause, r, []);
    if (handle > 0) { reader.pause(handle); reader.ref(handle, false); }
    return r;
  };
  r.resume = function () {
    P.ReflectApply(resume, r, []);
    if (handle > 0) {
      if (!unrefd) reader.ref(handle, true);
      reader.resume(handle);
    }
    return r;
  };
  const tty = require('../tty.js');
  if (tty.isatty(fd)) tty.decorateReadable(r, fd);
  return r;
}

module.exports = { createWritable, createReadable, writeAll };
