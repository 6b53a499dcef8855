'use strict';
// The HTTP/1 parser: http-parser-js (pure JavaScript, the shape of Node's
// internal HTTPParser binding) with the states that decide what a message
// is replaced by strict ones. http-parser-js alone is lenient where
// llhttp (Node's parser) is strict, and those leniencies are request
// smuggling and memory exhaustion vectors: Content-Length beside
// Transfer-Encoding, "1x" as a chunk size, control characters in header
// values, obs-fold, bare LF line ends, lines that grow without bound. The
// error codes and reasons are llhttp's, so clientError handlers and logs
// see what they see under Node.
const { HTTPParser: Base } = require('http-parser-js');

const REQUEST = Base.REQUEST;
const RESPONSE = Base.RESPONSE;
const kOnHeaders = Base.kOnHeaders;
const kOnHeadersComplete = Base.kOnHeadersComplete;
const kOnBody = Base.kOnBody;
const kOnMessageComplete = Base.kOnMessageComplete;

const kDefaultMaxHeaderSize = 16 * 1024;
// Node's lenient flags: none, or all of them (what insecureHTTPParser asks).
const kLenientNone = 0;
const kLenientAll = 0x3ff;
// Chunk-size lines (with their extensions) are bounded like llhttp's
// chunk extensions; Node answers an overflow with 413.
const kMaxChunkLine = 16 * 1024;
const MAX_SAFE = Number.MAX_SAFE_INTEGER;
// kBack: how far before the parse position (after it, if negative) a parse
// error really is.
const kBack = Symbol('kBack');

// Node's METHODS (llhttp's HTTP methods).
const methods = [
  'ACL', 'BIND', 'CHECKOUT', 'CONNECT', 'COPY', 'DELETE', 'GET', 'HEAD', 'LINK', 'LOCK', 'M-SEARCH', 'MERGE',
  'MKACTIVITY', 'MKCALENDAR', 'MKCOL', 'MOVE', 'NOTIFY', 'OPTIONS', 'PATCH', 'POST', 'PROPFIND', 'PROPPATCH',
  'PURGE', 'PUT', 'QUERY', 'REBIND', 'REPORT', 'SEARCH', 'SOURCE', 'SUBSCRIBE', 'TRACE', 'UNBIND', 'UNLINK',
  'UNLOCK', 'UNSUBSCRIBE',
];
const methodSet = new Set(methods);
// Every method llhttp's request-line trie knows (RTSP's and PRI among
// them): a byte that continues none of them is where it stops.
const trieMethods = methods.concat(['PRI', 'DESCRIBE', 'ANNOUNCE', 'SETUP', 'PLAY', 'PAUSE', 'TEARDOWN',
  'GET_PARAMETER', 'SET_PARAMETER', 'REDIRECT', 'RECORD', 'FLUSH']);

// badMethodAt returns the index of the first byte of s (a request line,
// or the start of one) that no method continues, or -1.
function badMethodAt(s) {
  const sp = s.indexOf(' ');
  const token = sp === -1 ? s : s.slice(0, sp);
  for (let i = 1; i <= token.length; i++) {
    const prefix = token.slice(0, i);
    if (!trieMethods.some((m) => m.startsWith(prefix))) return i - 1;
  }
  if (sp !== -1 && !trieMethods.includes(token)) return sp;
  return -1;
}

const tokenRe = /^[\^_`a-zA-Z\-0-9!#$%&'*+.|~]+$/;
// Field values: HTAB, visible ASCII, space and obs-text; no CTLs.
const badValueRe = /[^\t\x20-\x7e\x80-\xff]/;
const badUrlRe = /[\x00-\x20\x7f]/;
const badReasonRe = /[^\t\x20-\x7e\x80-\xff]/;

function parseError(code, reason) {
  const err = new Error(`Parse Error: ${reason}`);
  err.code = code;
  err.reason = reason;
  return err;
}

const isHeaderState = { REQUEST_LINE: true, RESPONSE_LINE: true, HEADER: true, BODY_CHUNKTRAILERS: true };

// trimOWS strips the optional whitespace around a field value.
function trimOWS(s) {
  let a = 0;
  let b = s.length;
  while (a < b && (s.charCodeAt(a) === 32 || s.charCodeAt(a) === 9)) a++;
  while (b > a && (s.charCodeAt(b - 1) === 32 || s.charCodeAt(b - 1) === 9)) b--;
  return s.slice(a, b);
}

function noBodyStatus(code) { return (code >= 100 && code < 200) || code === 204 || code === 304; }

class HTTPParser extends Base {
  constructor(type) {
    super();
    this.headerLimit = kDefaultMaxHeaderSize;
    this.lenient = false;
    if (type !== undefined) this.initialize(type);
  }

  // initialize(type[, resource, maxHeaderSize]) as Node's binding; the
  // limit stays for the messages that follow on the connection.
  // lenient (kLenientAll, the insecureHTTPParser option) lets header
  // values hold control characters and continue on folded lines; line
  // ends, framing and sizes stay strict.
  initialize(type, resource, maxHeaderSize, lenient) {
    super.initialize(type, resource);
    if (maxHeaderSize !== undefined) this.headerLimit = maxHeaderSize > 0 ? maxHeaderSize : kDefaultMaxHeaderSize;
    if (lenient !== undefined) this.lenient = lenient === kLenientAll;
    this.expectNoBody = false;
  }

  // After each message (http-parser-js's nextRequest); keeps the hint the
  // client gave for the response it waits for.
  reinitialize(type) {
    const hint = this.expectNoBody;
    this.initialize(type);
    this.expectNoBody = hint;
  }

  // free drops what the last message left (its headers, a partial line)
  // from a parser going to the free list; initialize readies it again.
  free() {
    this.info = { headers: [], upgrade: false };
    this.trailers = [];
    this.line = '';
    // Freed from one of its own callbacks (a 'close' listener the program
    // called by hand), the parser stops after that callback: execute lets
    // the chunk go when it returns.
    if (this.executing) this.freed = true;
    else this.chunk = null;
  }

  execute(chunk, start, length) {
    start = start || 0;
    length = typeof length === 'number' ? length : chunk.length;
    this.chunk = chunk;
    this.offset = start;
    this.end = start + length;
    this.executing = true;
    this.freed = false;
    try {
      while (this.offset < this.end && !this.freed) {
        if (this[this.state]()) break;
      }
    } catch (err) {
      if (this.isUserCall) throw err;
      this.hadError = true;
      err.bytesParsed = Math.min(this.end - start, Math.max(0, this.offset - start - (err[kBack] || 0)));
      delete err[kBack];
      return err;
    } finally {
      this.executing = false;
      this.chunk = null;
    }
    return this.offset - start;
  }

  finish() {
    if (this.hadError) return undefined;
    if (this.state === 'BODY_RAW') {
      this.userCall()(this[kOnMessageComplete]());
      return undefined;
    }
    if ((this.state === 'REQUEST_LINE' || this.state === 'RESPONSE_LINE') && this.line === '') return undefined;
    return parseError('HPE_INVALID_EOF_STATE', 'Invalid EOF state');
  }

  // countHeaderBytes counts the n bytes of a header line about to be
  // consumed; llhttp reports an overflow at the end of the span that
  // crossed the limit (the chunk's end, or the line's LF): seen bytes
  // on from the parse position.
  countHeaderBytes(n, seen) {
    if (!isHeaderState[this.state]) return;
    this.headerSize += n;
    if (this.headerSize > this.headerLimit) {
      const err = parseError('HPE_HEADER_OVERFLOW', 'Header overflow');
      err[kBack] = -seen;
      throw err;
    }
  }

  // consumeLine returns the next CRLF-terminated line (latin1, as Node
  // decodes headers) or undefined when the chunk ends first; the part
  // read so far is kept, within the state's limit.
  consumeLine() {
    const { chunk, end } = this;
    let i = chunk.indexOf(0x0a, this.offset);
    if (i >= end) i = -1;
    if (i === -1) {
      this.countHeaderBytes(end - this.offset, end - this.offset);
      this.line += chunk.toString('latin1', this.offset, end);
      this.offset = end;
      this.checkPartialLine();
      return undefined;
    }
    this.countHeaderBytes(i + 1 - this.offset, i - this.offset);
    const line = this.line + chunk.toString('latin1', this.offset, i);
    this.line = '';
    this.offset = i + 1;
    if (line.charCodeAt(line.length - 1) !== 13) throw this.crExpected();
    return line.slice(0, -1);
  }

  checkPartialLine() {
    if (this.state === 'BODY_CHUNKEMPTYLINE' && (this.line.length > 1 || (this.line !== '' && this.line !== '\r'))) {
      throw parseError('HPE_STRICT', 'Expected LF after chunk data');
    }
    if (this.state === 'BODY_CHUNKHEAD' && this.line.length > kMaxChunkLine) {
      throw parseError('HPE_CHUNK_EXTENSIONS_OVERFLOW', 'Chunk extensions overflow');
    }
  }

  crExpected() {
    switch (this.state) {
      case 'REQUEST_LINE': return parseError('HPE_INVALID_VERSION', 'Expected CRLF after version');
      case 'RESPONSE_LINE': return parseError('HPE_STRICT', 'Expected LF after CR');
      case 'BODY_CHUNKHEAD': return parseError('HPE_INVALID_CHUNK_SIZE', 'Invalid character in chunk size');
      case 'BODY_CHUNKEMPTYLINE': return parseError('HPE_STRICT', 'Expected LF after chunk data');
      default: return parseError('HPE_CR_EXPECTED', 'Missing expected CR after header value');
    }
  }

  REQUEST_LINE() {
    const line = this.consumeLine();
    if (line === undefined) {
      // llhttp stops at the first byte of a method that cannot be; so
      // does this, without waiting for the line's end.
      const at = badMethodAt(this.line);
      if (at !== -1) throw this.methodError(at - this.line.length);
      return undefined;
    }
    if (!line) return undefined; // CRLFs before a request are allowed
    const sp = line.indexOf(' ');
    const method = sp === -1 ? line : line.slice(0, sp);
    if (!methodSet.has(method)) {
      const at = badMethodAt(line);
      // The line's end (CRLF) is already consumed: step back over it.
      throw this.methodError(at === -1 ? undefined : at - (line.length + 2));
    }
    const rest = line.slice(sp + 1);
    const sp2 = rest.indexOf(' ');
    const url = sp2 === -1 ? rest : rest.slice(0, sp2);
    if (url === '' || badUrlRe.test(url)) throw parseError('HPE_INVALID_URL', 'Invalid characters in url');
    const version = sp2 === -1 ? '' : rest.slice(sp2 + 1);
    if (!version.startsWith('HTTP/')) throw parseError('HPE_INVALID_CONSTANT', 'Expected HTTP/, RTSP/ or ICE/');
    if (version.charCodeAt(8) === 13) throw parseError('HPE_STRICT', 'Expected CRLF after version');
    const m = /^HTTP\/([0-9])\.([0-9])$/.exec(version);
    if (!m || !validVersion(+m[1], +m[2])) throw parseError('HPE_INVALID_VERSION', 'Invalid HTTP version');
    this.info.method = method;
    this.info.url = url;
    this.info.versionMajor = +m[1];
    this.info.versionMinor = +m[2];
    this.body_bytes = 0;
    this.state = 'HEADER';
    return undefined;
  }

  // methodError is HPE_INVALID_METHOD found at the chunk position rel
  // (relative to the parse position; undefined: at it).
  methodError(rel) {
    const err = parseError('HPE_INVALID_METHOD', 'Invalid method encountered');
    if (rel !== undefined) err[kBack] = -Math.min(0, rel);
    return err;
  }

  RESPONSE_LINE() {
    const line = this.consumeLine();
    if (!line) return undefined; // CRLFs before a response are skipped too
    const m = /^HTTP\/([0-9])\.([0-9]) ([0-9]{3})(?: (.*))?$/.exec(line);
    if (!m) {
      if (!line.startsWith('HTTP/')) throw parseError('HPE_INVALID_CONSTANT', 'Expected HTTP/');
      throw parseError('HPE_INVALID_STATUS', 'Invalid response status');
    }
    if (!validVersion(+m[1], +m[2])) throw parseError('HPE_INVALID_VERSION', 'Invalid HTTP version');
    const reason = m[4] || '';
    if (badReasonRe.test(reason)) throw parseError('HPE_INVALID_STATUS', 'Invalid response status');
    this.info.versionMajor = +m[1];
    this.info.versionMinor = +m[2];
    this.info.statusCode = +m[3];
    this.info.statusMessage = reason;
    this.body_bytes = null;
    this.state = 'HEADER';
    return undefined;
  }

  parseHeader(line, headers) {
    const c0 = line.charCodeAt(0);
    if (c0 === 32 || c0 === 9) {
      if (!this.lenient || headers.length === 0) throw parseError('HPE_INVALID_HEADER_TOKEN', 'Unexpected whitespace after header value');
      // obs-fold: the line, whitespace and all, continues the previous
      // field's value; only the whole value's end is trimmed.
      if (line.includes('\r')) throw parseError('HPE_LF_EXPECTED', 'Missing expected LF after header value');
      this.foldedValue += line;
      headers[headers.length - 1] = trimOWS(this.foldedValue);
      return;
    }
    // A CR is only ever the first half of a line end (as llhttp reads it).
    if (c0 === 13) throw parseError('HPE_STRICT', 'Expected LF after headers');
    const colon = line.indexOf(':');
    const name = colon === -1 ? line : line.slice(0, colon);
    if (colon <= 0 || !tokenRe.test(name)) throw parseError('HPE_INVALID_HEADER_TOKEN', 'Invalid header token');
    const raw = line.slice(colon + 1);
    if (raw.includes('\r')) throw parseError('HPE_LF_EXPECTED', 'Missing expected LF after header value');
    const value = trimOWS(raw);
    if (this.lenient) this.foldedValue = raw.slice(raw.search(/[^ \t]|$/));
    if (!this.lenient && badValueRe.test(value)) throw parseError('HPE_INVALID_HEADER_TOKEN', 'Invalid header value char');
    headers.push(name, value);
  }

  HEADER() {
    const line = this.consumeLine();
    if (line === undefined) return undefined;
    if (line !== '') {
      this.parseHeader(line, this.info.headers);
      return undefined;
    }
    return this.headersComplete();
  }

  // framing reads the headers that decide where the message ends, and
  // rejects the combinations a front proxy could read differently.
  framing(headers) {
    let cl = null;
    let te = null;
    const f = { cl: null, chunked: false, te: false, close: false, keepAlive: false, upgradeToken: false, upgrade: false, badRequestTE: false };
    for (let i = 0; i < headers.length; i += 2) {
      const v = headers[i + 1];
      switch (headers[i].toLowerCase()) {
        case 'content-length':
          if (!/^[0-9]+$/.test(v)) throw parseError('HPE_INVALID_CONTENT_LENGTH', 'Invalid character in Content-Length');
          if (cl !== null) throw parseError('HPE_UNEXPECTED_CONTENT_LENGTH', 'Duplicate Content-Length');
          if (te !== null) throw parseError('HPE_INVALID_CONTENT_LENGTH', "Content-Length can't be present with Transfer-Encoding");
          cl = Number(v);
          if (cl > MAX_SAFE) throw parseError('HPE_INVALID_CONTENT_LENGTH', 'Content-Length overflow');
          break;
        case 'transfer-encoding':
          if (cl !== null) throw parseError('HPE_INVALID_TRANSFER_ENCODING', "Transfer-Encoding can't be present with Content-Length");
          te = te === null ? v : `${te},${v}`;
          break;
        case 'connection':
          for (const t of v.toLowerCase().split(',')) {
            const tok = t.trim();
            if (tok === 'close') f.close = true;
            else if (tok === 'keep-alive') f.keepAlive = true;
            else if (tok === 'upgrade') f.upgradeToken = true;
          }
          break;
        case 'upgrade':
          f.upgrade = true;
          break;
        default:
      }
    }
    f.cl = cl;
    if (te !== null) {
      f.te = true;
      const codings = te.toLowerCase().split(',').map((s) => s.trim()).filter((s) => s !== '');
      const at = codings.indexOf('chunked');
      if (at !== -1 && (at !== codings.length - 1 || codings.lastIndexOf('chunked') !== at)) {
        throw parseError('HPE_INVALID_TRANSFER_ENCODING', 'Invalid `Transfer-Encoding` header value');
      }
      f.chunked = at !== -1;
      // llhttp reports this one after the headers are complete: the
      // request is seen, its body never.
      f.badRequestTE = !f.chunked && this.type === REQUEST;
    }
    return f;
  }

  headersComplete() {
    const info = this.info;
    const f = this.framing(info.headers);
    const isRequest = this.type === REQUEST;
    const status = info.statusCode;
    if (f.upgrade && f.upgradeToken) info.upgrade = isRequest || status === 101;
    else info.upgrade = isRequest && info.method === 'CONNECT';
    this.isChunked = f.chunked;
    if (f.chunked) this.body_bytes = null;
    else if (f.cl !== null) this.body_bytes = f.cl;
    else if (isRequest || noBodyStatus(status)) this.body_bytes = 0;
    else this.body_bytes = null; // a response read until the connection ends
    info.shouldKeepAlive = this.keepAlive(f);
    const skipBody = this.userCall()(this[kOnHeadersComplete](info.versionMajor, info.versionMinor, info.headers,
      isRequest ? info.method : undefined, isRequest ? info.url : undefined,
      isRequest ? undefined : status, isRequest ? undefined : info.statusMessage, info.upgrade, info.shouldKeepAlive));
    if (f.badRequestTE) throw parseError('HPE_INVALID_TRANSFER_ENCODING', 'Request has invalid `Transfer-Encoding`');
    if (skipBody === 2) {
      this.nextRequest();
      return true;
    }
    if (this.isChunked && !skipBody) this.state = 'BODY_CHUNKHEAD';
    else if (skipBody || this.body_bytes === 0) this.nextRequest();
    else if (this.body_bytes === null) this.state = 'BODY_RAW';
    else this.state = 'BODY_SIZED';
    return false;
  }

  keepAlive(f) {
    const info = this.info;
    const http11 = info.versionMajor > 1 || (info.versionMajor === 1 && info.versionMinor >= 1);
    if (http11 ? f.close : !f.keepAlive) return false;
    // A response whose end is the connection's end cannot keep it.
    return !(this.type === RESPONSE && this.body_bytes === null && !this.isChunked && !this.expectNoBody);
  }

  BODY_CHUNKHEAD() {
    const line = this.consumeLine();
    if (line === undefined) return undefined;
    const m = /^([0-9a-fA-F]+)[ \t]*(?:;.*)?$/.exec(line);
    if (!m) throw parseError('HPE_INVALID_CHUNK_SIZE', 'Invalid character in chunk size');
    const hex = m[1].replace(/^0+(?=.)/, '');
    if (hex.length > 13) throw parseError('HPE_INVALID_CHUNK_SIZE', 'Chunk size overflow');
    this.body_bytes = parseInt(hex, 16);
    this.state = this.body_bytes === 0 ? 'BODY_CHUNKTRAILERS' : 'BODY_CHUNK';
    return undefined;
  }

  BODY_CHUNKEMPTYLINE() {
    const line = this.consumeLine();
    if (line === undefined) return undefined;
    if (line !== '') throw parseError('HPE_STRICT', 'Expected LF after chunk data');
    this.state = 'BODY_CHUNKHEAD';
    return undefined;
  }

  BODY_CHUNKTRAILERS() {
    const line = this.consumeLine();
    if (line === undefined) return undefined;
    if (line !== '') {
      this.parseHeader(line, this.trailers);
      return undefined;
    }
    if (this.trailers.length) this.userCall()(this[kOnHeaders](this.trailers, ''));
    this.nextRequest();
    return undefined;
  }
}

function validVersion(major, minor) {
  return (major === 1 && (minor === 0 || minor === 1)) || (major === 0 && minor === 9) || (major === 2 && minor === 0);
}

HTTPParser.REQUEST = REQUEST;
HTTPParser.RESPONSE = RESPONSE;
HTTPParser.kOnHeaders = kOnHeaders;
HTTPParser.kOnHeadersComplete = kOnHeadersComplete;
HTTPParser.kOnBody = kOnBody;
HTTPParser.kOnMessageComplete = kOnMessageComplete;
HTTPParser.kLenientNone = kLenientNone;
HTTPParser.kLenientAll = kLenientAll;

module.exports = { HTTPParser, methods, parseError, kDefaultMaxHeaderSize };
