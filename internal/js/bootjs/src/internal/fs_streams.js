'use strict';
// fs.ReadStream and fs.WriteStream as Node has them: constructors that
// work with or without new and as the base of an old-style subclass,
// I/O through options.fs (fs itself by default, or a FileHandle's
// methods), an open() a program may patch, and the same events in the
// same order (open, ready, data, end, finish, close).
const { Readable, Writable, finished } = require('../stream.js');
const { codedError } = require('./errors.js');
const { validateInteger, validateFunction, validateBoolean } = require('./validators.js');

const kFs = Symbol('kFs');
const kHandle = Symbol('kHandle');
const kIsPerformingIO = Symbol('kIsPerformingIO');
const kIoDone = Symbol('kIoDone');

function lazyFs() { return require('../fs.js'); }

// handleOps are a FileHandle's methods in fs's callback shapes, so a
// stream reads and writes a handle as it does a descriptor.
function handleOps(handle) {
  const then = (p, cb, ok) => p.then((r) => ok(r), (err) => cb(err));
  return {
    open: () => { throw codedError('ERR_METHOD_NOT_IMPLEMENTED', 'open()'); },
    close: (fd, cb) => then(handle.close(), cb, () => cb()),
    read: (fd, buf, off, len, pos, cb) => then(handle.read(buf, off, len, pos), cb, (r) => cb(null, r.bytesRead, r.buffer)),
    write: (fd, buf, off, len, pos, cb) => then(handle.write(buf, off, len, pos), cb, (r) => cb(null, r.bytesWritten, r.buffer)),
    writev: (fd, bufs, pos, cb) => then(handle.writev(bufs, pos), cb, (r) => cb(null, r.bytesWritten, r.buffers)),
    fsync: (fd, cb) => then(handle.sync(), cb, () => cb()),
  };
}

// importFd takes options.fd: a descriptor, or a FileHandle whose methods
// the stream then uses and whose close closes the stream.
function importFd(stream, options) {
  if (typeof options.fd === 'number') return options.fd;
  const { FileHandle } = lazyFs()._internals;
  if (options.fd instanceof FileHandle) {
    if (options.fs) throw codedError('ERR_METHOD_NOT_IMPLEMENTED', 'FileHandle with fs');
    stream[kHandle] = options.fd;
    stream[kFs] = handleOps(options.fd);
    options.fd.on('close', () => stream.close());
    return options.fd.fd;
  }
  throw codedError('ERR_INVALID_ARG_TYPE', 'options.fd', ['number', 'FileHandle'], options.fd);
}

// setUp does what both constructors share: the fs to use, the file or
// descriptor, and the start offset.
function setUp(stream, path, options, defFlags, ops) {
  stream[kFs] = options.fs || lazyFs();
  for (const op of ops) validateFunction(stream[kFs][op], `options.fs.${op}`);
  if (options.fd == null) {
    stream.fd = null;
    stream.path = lazyFs()._toPath(path);
    stream.flags = options.flags === undefined ? defFlags : options.flags;
    stream.mode = options.mode === undefined ? 0o666 : options.mode;
  } else {
    stream.fd = importFd(stream, options);
    validateInteger(stream.fd, 'fd', 0, 2147483647);
  }
  options.autoDestroy = options.autoClose === undefined ? true : options.autoClose;
  if (options.emitClose === undefined) options.emitClose = true;
  stream.start = options.start;
  stream.pos = undefined;
  stream[kIsPerformingIO] = false;
  if (stream.start !== undefined) {
    validateInteger(stream.start, 'start', 0);
    stream.pos = stream.start;
  }
}

// construct opens the file; a program that replaced open() (old
// subclasses, graceful-fs) opens it itself and says so with 'open'.
function construct(callback) {
  const stream = this;
  if (typeof stream.fd === 'number') {
    callback();
    return;
  }
  if (stream.open !== openWriteFs && stream.open !== openReadFs) {
    const orgEmit = stream.emit;
    stream.emit = function emit(...args) {
      if (args[0] === 'open') {
        this.emit = orgEmit;
        callback();
        Reflect.apply(orgEmit, this, args);
      } else if (args[0] === 'error') {
        this.emit = orgEmit;
        callback(args[1]);
      } else {
        Reflect.apply(orgEmit, this, args);
      }
    };
    stream.open();
    return;
  }
  stream[kFs].open(stream.path, stream.flags, stream.mode, (er, fd) => {
    if (er) {
      callback(er);
      return;
    }
    stream.fd = fd;
    callback();
    // readable-stream marks the stream constructed a tick after the
    // callback (Node at once): 'open' waits for that, so what its
    // listeners write goes out first, as in Node.
    process.nextTick(() => {
      stream.emit('open', stream.fd);
      stream.emit('ready');
    });
  });
}

function destroy(err, cb) {
  // A read or write under way finishes before the descriptor closes.
  if (this[kIsPerformingIO]) this.once(kIoDone, (er) => close(this, err || er, cb));
  else close(this, err, cb);
}

function close(stream, err, cb) {
  if (!stream.fd) {
    cb(err);
  } else if (stream.flush) {
    stream[kFs].fsync(stream.fd, (flushErr) => closeFd(stream, err || flushErr, cb));
  } else {
    closeFd(stream, err, cb);
  }
}

function closeFd(stream, err, cb) {
  stream[kFs].close(stream.fd, (er) => cb(er || err));
  stream.fd = null;
}

function deprecated(msg, code) {
  let warned = false;
  return function open() {
    if (!warned) {
      warned = true;
      process.emitWarning(msg, 'DeprecationWarning', code);
    }
  };
}
const openReadFs = deprecated('ReadStream.prototype.open() is deprecated', 'DEP0135');
const openWriteFs = deprecated('WriteStream.prototype.open() is deprecated', 'DEP0135');

function copyOptions(options) {
  const { getOptions } = lazyFs()._internals;
  return { ...getOptions(options, {}) };
}

function ReadStream(path, options) {
  if (!(this instanceof ReadStream)) return new ReadStream(path, options);
  options = copyOptions(options);
  if (options.highWaterMark === undefined) options.highWaterMark = 64 * 1024;
  setUp(this, path, options, 'r', ['open', 'read', 'close']);
  this.end = options.end ?? Infinity;
  this.bytesRead = 0;
  if (this.end !== Infinity) {
    validateInteger(this.end, 'end', 0);
    if (this.start !== undefined && this.start > this.end) {
      throw codedError('ERR_OUT_OF_RANGE', 'start', `<= "end" (here: ${this.end})`, this.start);
    }
  }
  Reflect.apply(Readable, this, [options]);
}
Object.setPrototypeOf(ReadStream.prototype, Readable.prototype);
Object.setPrototypeOf(ReadStream, Readable);

// stateProps gives a stream prototype autoClose (its state's
// autoDestroy) and pending (not open yet).
function stateProps(proto, state) {
  Object.defineProperty(proto, 'autoClose', {
    get() { return this[state].autoDestroy; },
    set(val) { this[state].autoDestroy = val; },
    configurable: true,
  });
  Object.defineProperty(proto, 'pending', {
    get() { return this.fd === null; },
    configurable: true,
  });
}
stateProps(ReadStream.prototype, '_readableState');
ReadStream.prototype.open = openReadFs;
ReadStream.prototype._construct = construct;
ReadStream.prototype._read = function _read(n) {
  n = this.pos !== undefined ? Math.min(this.end - this.pos + 1, n) : Math.min(this.end - this.bytesRead + 1, n);
  if (n <= 0) {
    this.push(null);
    return;
  }
  const { Buffer } = require('../buffer.js');
  const buf = Buffer.allocUnsafeSlow(n);
  this[kIsPerformingIO] = true;
  this[kFs].read(this.fd, buf, 0, n, this.pos, (er, bytesRead) => {
    this[kIsPerformingIO] = false;
    if (this.destroyed) {
      this.emit(kIoDone, er);
      return;
    }
    if (er) {
      this.destroy(er);
    } else if (bytesRead > 0) {
      if (this.pos !== undefined) this.pos += bytesRead;
      this.bytesRead += bytesRead;
      // A short read keeps only what it got, not the whole allocation.
      this.push(bytesRead !== buf.length ? Buffer.from(buf.subarray(0, bytesRead)) : buf);
    } else {
      this.push(null);
    }
  });
};
ReadStream.prototype._destroy = destroy;
ReadStream.prototype.close = function close(cb) {
  if (typeof cb === 'function') finished(this, cb);
  this.destroy();
};

function WriteStream(path, options) {
  if (!(this instanceof WriteStream)) return new WriteStream(path, options);
  options = copyOptions(options);
  options.decodeStrings = true;
  const fsOps = options.fs || lazyFs();
  validateFunction(fsOps.open, 'options.fs.open');
  if (!fsOps.write && !fsOps.writev) throw codedError('ERR_INVALID_ARG_TYPE', 'options.fs.write', 'of type function', fsOps.write);
  if (fsOps.write) validateFunction(fsOps.write, 'options.fs.write');
  if (fsOps.writev) validateFunction(fsOps.writev, 'options.fs.writev');
  setUp(this, path, options, 'w', ['open', 'close']);
  // Either write or writev is enough: the stream uses the one it has.
  if (!this[kFs].write) this._write = null;
  if (!this[kFs].writev) this._writev = null;
  this.bytesWritten = 0;
  this.flush = false;
  if (options.flush != null) {
    validateBoolean(options.flush, 'options.flush');
    this.flush = options.flush;
  }
  Reflect.apply(Writable, this, [options]);
  if (options.encoding) this.setDefaultEncoding(options.encoding);
}
Object.setPrototypeOf(WriteStream.prototype, Writable.prototype);
Object.setPrototypeOf(WriteStream, Writable);

stateProps(WriteStream.prototype, '_writableState');
WriteStream.prototype.open = openWriteFs;
WriteStream.prototype._construct = construct;

function writeAll(data, cb) {
  const done = (er, bytes) => {
    this[kIsPerformingIO] = false;
    if (this.destroyed) {
      cb(er);
      this.emit(kIoDone, er);
      return;
    }
    if (er) {
      cb(er);
      return;
    }
    this.bytesWritten += bytes;
    cb();
  };
  this[kIsPerformingIO] = true;
  if (Array.isArray(data)) {
    const size = data.reduce((n, b) => n + b.length, 0);
    this[kFs].writev(this.fd, data, this.pos, done);
    if (this.pos !== undefined) this.pos += size;
    return;
  }
  this[kFs].write(this.fd, data, 0, data.length, this.pos, done);
  if (this.pos !== undefined) this.pos += data.length;
}
WriteStream.prototype._write = function _write(data, encoding, cb) {
  writeAll.call(this, data, cb);
};
WriteStream.prototype._writev = function _writev(data, cb) {
  writeAll.call(this, data.map((d) => d.chunk), cb);
};
WriteStream.prototype._destroy = destroy;
WriteStream.prototype.close = function close(cb) {
  if (cb) {
    if (this.closed) {
      process.nextTick(cb);
      return;
    }
    this.on('close', cb);
  }
  // Without autoClose nothing else would close the file after 'finish'.
  if (!this.autoClose) this.on('finish', this.destroy);
  this.end();
};
WriteStream.prototype.destroySoon = WriteStream.prototype.end;

module.exports = { ReadStream, WriteStream };
