'use strict';
// tty: terminals are the kernel's PTYs. isatty, raw mode and the window
// size go to the terminal behind the descriptor, the same one a
// WebAssembly program on that descriptor sees.
const { B, scratchF64 } = require('./internal/bridge.js');
const { fromBridge } = require('./internal/errors.js');

function isatty(fd) {
  return Number.isInteger(fd) && fd >= 0 && fd <= 0x7fffffff && B.isatty(fd) === true;
}

// windowSize returns [columns, rows] of fd's terminal, or undefined.
function windowSize(fd) {
  try {
    B.ttySize(fd);
  } catch {
    return undefined;
  }
  return [scratchF64[0], scratchF64[1]];
}

function setRawMode(fd, on) {
  try {
    B.ttySetRaw(fd, !!on);
  } catch (e) {
    throw fromBridge(e, 'setRawMode');
  }
}

// decorateWritable makes a stdio Writable on a terminal a tty.WriteStream:
// columns and rows follow the window size, and 'resize' is emitted when
// it changes (SIGWINCH).
function decorateWritable(w, fd) {
  w.isTTY = true;
  w._type = 'tty';
  Object.defineProperty(w, 'columns', { configurable: true, enumerable: true, get() { const s = windowSize(fd); return s && s[0] > 0 ? s[0] : 80; } });
  Object.defineProperty(w, 'rows', { configurable: true, enumerable: true, get() { const s = windowSize(fd); return s && s[1] > 0 ? s[1] : 24; } });
  w.getWindowSize = () => [w.columns, w.rows];
  w.getColorDepth = () => 8;
  w.hasColors = (n = 16) => n <= 256;
  w.cursorTo = (x, y, cb) => { w.write(typeof y === 'number' ? `\x1b[${y + 1};${x + 1}H` : `\x1b[${x + 1}G`, cb); return true; };
  w.moveCursor = (dx, dy, cb) => { w.write((dx < 0 ? `\x1b[${-dx}D` : dx > 0 ? `\x1b[${dx}C` : '') + (dy < 0 ? `\x1b[${-dy}A` : dy > 0 ? `\x1b[${dy}B` : ''), cb); return true; };
  w.clearLine = (dir, cb) => { w.write(dir < 0 ? '\x1b[1K' : dir > 0 ? '\x1b[0K' : '\x1b[2K', cb); return true; };
  w.clearScreenDown = (cb) => { w.write('\x1b[0J', cb); return true; };
  const { process } = require('./process.js');
  process.on('SIGWINCH', () => w.emit('resize'));
  return w;
}

// decorateReadable makes a stdio Readable on a terminal a tty.ReadStream.
function decorateReadable(r, fd) {
  r.isTTY = true;
  r.isRaw = false;
  r.setRawMode = (on) => {
    setRawMode(fd, on);
    r.isRaw = !!on;
    return r;
  };
  return r;
}

class ReadStream {
  constructor(fd) {
    if (!isatty(fd)) throw fromBridge('ENOTTY', 'tty.ReadStream');
    return decorateReadable(require('./internal/stdio.js').createReadable(fd), fd);
  }
}

class WriteStream {
  constructor(fd) {
    if (!isatty(fd)) throw fromBridge('ENOTTY', 'tty.WriteStream');
    return decorateWritable(require('./internal/stdio.js').createWritable(fd), fd);
  }
}

module.exports = { isatty, ReadStream, WriteStream, decorateWritable, decorateReadable };
