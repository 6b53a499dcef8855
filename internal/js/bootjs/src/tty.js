'use strict';
// tty: terminals are the kernel's PTYs. isatty, raw mode and the window
// size go to the terminal behind the descriptor, the same one a
// WebAssembly program on that descriptor sees.
const { B, scratchF64 } = require('./internal/bridge.js');
const { fromBridge, codedError } = require('./internal/errors.js');

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

// Colour depths in bits, as Node's getColorDepth reports them.
const COLORS_2 = 1;
const COLORS_16 = 4;
const COLORS_256 = 8;
const COLORS_16m = 24;
const TERM_ENVS = {
  __proto__: null,
  eterm: COLORS_16, cons25: COLORS_16, console: COLORS_16, cygwin: COLORS_16, dtterm: COLORS_16,
  gnome: COLORS_16, hurd: COLORS_16, jfbterm: COLORS_16, konsole: COLORS_16, kterm: COLORS_16,
  mlterm: COLORS_16, mosh: COLORS_16m, putty: COLORS_16, st: COLORS_16,
  'rxvt-unicode-24bit': COLORS_16m, terminator: COLORS_16m,
};
const CI_ENVS = ['APPVEYOR', 'BUILDKITE', 'CIRCLECI', 'DRONE', 'GITHUB_ACTIONS', 'GITLAB_CI', 'TRAVIS'];
const TERM_PATTERNS = [/ansi/, /color/, /linux/, /direct/, /^con[0-9]*x[0-9]/, /^rxvt/, /^screen/, /^xterm/, /^vt100/, /^vt220/];

// getColorDepth is Node's: the depth follows the environment (FORCE_COLOR,
// NO_COLOR, TERM, CI...), not the stream, which is why tools call it on
// tty.WriteStream.prototype before any stream exists (tsx's help does).
function getColorDepth(env = require('./process.js').process.env) {
  if (env.FORCE_COLOR !== undefined) {
    switch (env.FORCE_COLOR) {
      case '': case '1': case 'true': return COLORS_16;
      case '2': return COLORS_256;
      case '3': return COLORS_16m;
      default: return COLORS_2;
    }
  }
  if (env.NODE_DISABLE_COLORS !== undefined || env.NO_COLOR !== undefined || env.TERM === 'dumb') return COLORS_2;
  if (env.TMUX) return COLORS_256;
  if (env.CI) {
    for (const name of CI_ENVS) if (name in env) return COLORS_256;
    return env.CI_NAME === 'codeship' ? COLORS_256 : COLORS_2;
  }
  if ('TEAMCITY_VERSION' in env) return /^(9\.(0*[1-9]\d*)\.|\d{2,}\.)/.test(env.TEAMCITY_VERSION) ? COLORS_16 : COLORS_2;
  switch (env.TERM_PROGRAM) {
    case 'iTerm.app':
      return !env.TERM_PROGRAM_VERSION || /^[0-2]\./.test(env.TERM_PROGRAM_VERSION) ? COLORS_256 : COLORS_16m;
    case 'HyperTerm': case 'MacTerm': return COLORS_16m;
    case 'Apple_Terminal': return COLORS_256;
  }
  if (env.COLORTERM === 'truecolor' || env.COLORTERM === '24bit') return COLORS_16m;
  if (env.TERM) {
    if (/^xterm-256/.test(env.TERM)) return COLORS_256;
    const term = String(env.TERM).toLowerCase();
    if (TERM_ENVS[term]) return TERM_ENVS[term];
    if (TERM_PATTERNS.some((re) => re.test(term))) return COLORS_16;
  }
  if (env.COLORTERM) return COLORS_16;
  return COLORS_2;
}

function hasColors(count, env) {
  if (env === undefined && (count === undefined || (typeof count === 'object' && count !== null))) {
    env = count;
    count = 16;
  } else if (typeof count !== 'number') {
    throw codedError('ERR_INVALID_ARG_TYPE', 'count', 'number', count);
  } else if (!Number.isInteger(count)) {
    throw codedError('ERR_OUT_OF_RANGE', 'count', 'an integer', count);
  } else if (count < 2 || count > Number.MAX_SAFE_INTEGER) {
    throw codedError('ERR_OUT_OF_RANGE', 'count', `>= 2 && <= ${Number.MAX_SAFE_INTEGER}`, count);
  }
  return count <= 2 ** getColorDepth(env);
}

// decorateWritable makes a stdio Writable on a terminal a tty.WriteStream:
// columns and rows follow the window size, and 'resize' is emitted when
// it changes (SIGWINCH).
function decorateWritable(w, fd) {
  w.isTTY = true;
  w._type = 'tty';
  Object.defineProperty(w, 'columns', { configurable: true, enumerable: true, get() { const s = windowSize(fd); return s && s[0] > 0 ? s[0] : 80; } });
  Object.defineProperty(w, 'rows', { configurable: true, enumerable: true, get() { const s = windowSize(fd); return s && s[1] > 0 ? s[1] : 24; } });
  for (const name of ['getWindowSize', 'getColorDepth', 'hasColors', 'cursorTo', 'moveCursor', 'clearLine', 'clearScreenDown']) {
    w[name] = WriteStream.prototype[name];
  }
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

  getWindowSize() { return [this.columns, this.rows]; }

  getColorDepth(env) { return getColorDepth(env); }

  hasColors(count, env) { return hasColors(count, env); }

  cursorTo(x, y, cb) { this.write(typeof y === 'number' ? `\x1b[${y + 1};${x + 1}H` : `\x1b[${x + 1}G`, cb); return true; }

  moveCursor(dx, dy, cb) {
    this.write((dx < 0 ? `\x1b[${-dx}D` : dx > 0 ? `\x1b[${dx}C` : '') + (dy < 0 ? `\x1b[${-dy}A` : dy > 0 ? `\x1b[${dy}B` : ''), cb);
    return true;
  }

  clearLine(dir, cb) { this.write(dir < 0 ? '\x1b[1K' : dir > 0 ? '\x1b[0K' : '\x1b[2K', cb); return true; }

  clearScreenDown(cb) { this.write('\x1b[0J', cb); return true; }
}

module.exports = { isatty, ReadStream, WriteStream, decorateWritable, decorateReadable };
