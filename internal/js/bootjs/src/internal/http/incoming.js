'use strict';
// IncomingMessage: a request on the server, a response on the client
// (Node's _http_incoming).
const { Readable, finished } = require('../../stream.js');

const kHeaders = Symbol('kHeaders');
const kHeadersDistinct = Symbol('kHeadersDistinct');
const kHeadersCount = Symbol('kHeadersCount');
const kTrailers = Symbol('kTrailers');
const kTrailersDistinct = Symbol('kTrailersDistinct');
const kTrailersCount = Symbol('kTrailersCount');

function readStart(socket) {
  if (socket && !socket._paused && socket.readable) socket.resume();
}

function IncomingMessage(socket) {
  let streamOptions;
  if (socket) streamOptions = { highWaterMark: socket.readableHighWaterMark };
  Readable.call(this, streamOptions);
  // No data is read until the app asks for it (see _read).
  this._readableState.readingMore = true;
  this.socket = socket;
  this[kHeaders] = null;
  this[kHeadersDistinct] = null;
  this[kHeadersCount] = 0;
  this.rawHeaders = [];
  this[kTrailers] = null;
  this[kTrailersDistinct] = null;
  this[kTrailersCount] = 0;
  this.rawTrailers = [];
  this.joinDuplicateHeaders = false;
  this.aborted = false;
  this.complete = false;
  this.upgrade = null;
  this.url = '';
  this.method = null;
  this.statusCode = null;
  this.statusMessage = null;
  this.client = socket;
  this._consuming = false;
  // Set once the app no longer wants the body: it is read and dropped.
  this._dumped = false;
}
Object.setPrototypeOf(IncomingMessage.prototype, Readable.prototype);
Object.setPrototypeOf(IncomingMessage, Readable);

Object.defineProperty(IncomingMessage.prototype, 'connection', {
  configurable: true, enumerable: true,
  get() { return this.socket; },
  set(val) { this.socket = val; },
});

function lazyMap(key, countKey, rawKey, distinct) {
  return {
    configurable: true, enumerable: true,
    get() {
      if (!this[key]) {
        this[key] = {};
        const src = this[rawKey];
        const dst = this[key];
        for (let n = 0; n < this[countKey]; n += 2) {
          if (distinct) this._addHeaderLineDistinct(src[n], src[n + 1], dst);
          else this._addHeaderLine(src[n], src[n + 1], dst);
        }
      }
      return this[key];
    },
    set(val) { this[key] = val; },
  };
}
Object.defineProperty(IncomingMessage.prototype, 'headers', lazyMap(kHeaders, kHeadersCount, 'rawHeaders', false));
Object.defineProperty(IncomingMessage.prototype, 'headersDistinct', lazyMap(kHeadersDistinct, kHeadersCount, 'rawHeaders', true));
Object.defineProperty(IncomingMessage.prototype, 'trailers', lazyMap(kTrailers, kTrailersCount, 'rawTrailers', false));
Object.defineProperty(IncomingMessage.prototype, 'trailersDistinct', lazyMap(kTrailersDistinct, kTrailersCount, 'rawTrailers', true));

IncomingMessage.prototype.setTimeout = function setTimeout(msecs, callback) {
  if (callback) this.on('timeout', callback);
  this.socket.setTimeout(msecs);
  return this;
};

IncomingMessage.prototype._read = function _read(n) {
  if (!this._consuming) {
    this._readableState.readingMore = false;
    this._consuming = true;
  }
  // The socket was paused when the body outgrew the buffer; reading
  // resumes it.
  if (this.socket && this.socket.readable) readStart(this.socket);
};

// An incomplete message destroyed is an abort; the connection goes with
// it, since the rest of the body would be misread as the next message.
IncomingMessage.prototype._destroy = function _destroy(err, cb) {
  if (!this.readableEnded || !this.complete) {
    this.aborted = true;
    this.emit('aborted');
  }
  if (this.socket && !this.socket.destroyed && this.aborted) {
    this.socket.destroy(err);
    const cleanup = finished(this.socket, (e) => {
      if (e && e.code === 'ERR_STREAM_PREMATURE_CLOSE') e = null;
      cleanup();
      process.nextTick(onError, this, e || err, cb);
    });
  } else {
    process.nextTick(onError, this, err, cb);
  }
};

function onError(self, error, cb) {
  // A message nobody listens to for errors does not crash the process for
  // an abort (as Node).
  if (self.listenerCount('error') === 0) cb();
  else cb(error);
}

IncomingMessage.prototype._addHeaderLines = function _addHeaderLines(headers, n) {
  if (headers && headers.length) {
    let dest;
    if (this.complete) {
      this.rawTrailers = headers;
      this[kTrailersCount] = n;
      dest = this[kTrailers];
    } else {
      this.rawHeaders = headers;
      this[kHeadersCount] = n;
      dest = this[kHeaders];
    }
    if (dest) {
      for (let i = 0; i < n; i += 2) this._addHeaderLine(headers[i], headers[i + 1], dest);
    }
  }
};

// Repeated fields merge as in Node: these keep their first value,
// set-cookie collects an array, cookie joins with "; ", the rest with ", ".
const dropDuplicates = new Set([
  'content-type', 'content-length', 'user-agent', 'referer', 'host', 'authorization', 'proxy-authorization',
  'if-modified-since', 'if-unmodified-since', 'from', 'location', 'max-forwards', 'retry-after', 'etag',
  'last-modified', 'server', 'age', 'expires',
]);

IncomingMessage.prototype._addHeaderLine = function _addHeaderLine(field, value, dest) {
  field = field.toLowerCase();
  // Own properties only: a field named like an Object.prototype member
  // ('constructor') is a new field.
  if (!Object.prototype.hasOwnProperty.call(dest, field)) {
    dest[field] = field === 'set-cookie' ? [value] : value;
    return;
  }
  // joinDuplicateHeaders joins the fields that would keep their first
  // value; cookie joins with "; " either way.
  if (field === 'set-cookie') dest[field].push(value);
  else if (field === 'cookie') dest[field] += `; ${value}`;
  else if (dropDuplicates.has(field) && !this.joinDuplicateHeaders) return;
  else dest[field] += `, ${value}`;
};

IncomingMessage.prototype._addHeaderLineDistinct = function _addHeaderLineDistinct(field, value, dest) {
  const key = field.toLowerCase();
  if (!Object.prototype.hasOwnProperty.call(dest, key)) dest[key] = [value];
  else dest[key].push(value);
};

// _dump drops the body the app did not read, so the connection can carry
// the next message.
IncomingMessage.prototype._dump = function _dump() {
  if (!this._dumped) {
    this._dumped = true;
    this.removeAllListeners('data');
    this.resume();
  }
};

module.exports = { IncomingMessage, readStart, readStop: (s) => s && s.pause() };
