'use strict';
// url: WHATWG URL (whatwg-url) and the legacy API (url polyfill), plus
// the file URL helpers.
const { codedError } = require('./internal/errors.js');
const { URL, URLSearchParams } = require('./internal/whatwg_url.js');

// The legacy API is the url polyfill, which pulls in qs and its
// dependencies: loaded at its first use, not by every require('url')
// (fetch's, for one, wants only URL).
let legacyModule;
const legacy = () => legacyModule ??= require('url/');

function fileURLToPath(u) {
  if (typeof u === 'string') u = new URL(u);
  else if (!u || typeof u.href !== 'string') throw codedError('ERR_INVALID_ARG_TYPE', 'path', 'of type string or an instance of URL', u);
  if (u.protocol !== 'file:') throw codedError('ERR_INVALID_URL_SCHEME', 'file');
  if (u.hostname !== '' && u.hostname !== 'localhost') throw codedError('ERR_INVALID_FILE_URL_HOST', 'must be "localhost" or empty on linux');
  const p = u.pathname;
  for (let i = 0; i < p.length; i++) {
    if (p[i] === '%' && p[i + 1] === '2' && (p[i + 2] === 'f' || p[i + 2] === 'F')) {
      throw codedError('ERR_INVALID_FILE_URL_PATH', 'must not include encoded / characters');
    }
  }
  return decodeURIComponent(p);
}

// pathChar says how pathToFileURL writes each ASCII character of a
// path: itself, or percent-encoded (controls, space and the characters
// a URL would read otherwise: " # % < > ? [ \ ] ^ ` { | } ~ DEL).
const pathEncoded = new Set(' "#%<>?[\\]^`{|}~\x7f');

function encodePath(p, windows) {
  let out = '';
  for (const ch of p) {
    const c = ch.codePointAt(0);
    if (windows && ch === '\\') out += '/';
    else if (c < 0x20 || pathEncoded.has(ch)) out += `%${c.toString(16).toUpperCase().padStart(2, '0')}`;
    else if (c < 0x80) out += ch;
    else out += encodeURIComponent(ch);
  }
  return out;
}

// win32Normalize resolves the . and .. segments of a Windows path with
// backslashes (there is no Windows working directory to resolve against).
function win32Normalize(p) {
  const parts = p.replace(/\//g, '\\').split('\\');
  const out = [];
  for (let i = 0; i < parts.length; i++) {
    const seg = parts[i];
    if (seg === '.' || (seg === '' && i > 0 && i < parts.length - 1)) continue;
    if (seg === '..') {
      if (out.length > 1) out.pop();
      continue;
    }
    out.push(seg);
  }
  return out.join('\\');
}

// pathToFileURL turns a path into a file: URL, as Node does; with
// { windows: true } the path is a Windows one (drive letters, UNC shares,
// \\?\ prefixes).
function pathToFileURL(filepath, options = undefined) {
  const path = require('./path.js');
  const windows = options != null && options.windows !== undefined ? Boolean(options.windows) : false;
  if (typeof filepath !== 'string') throw codedError('ERR_INVALID_ARG_TYPE', 'path', 'of type string', filepath);
  if (windows) {
    let unc = -1;
    if (filepath.startsWith('\\\\?\\UNC\\')) unc = 8;
    else if (filepath.startsWith('\\\\?\\')) filepath = filepath.slice(4);
    else if (filepath.startsWith('\\\\')) unc = 2;
    if (unc !== -1) {
      const end = filepath.indexOf('\\', unc);
      if (end === -1) throw codedError('ERR_INVALID_ARG_VALUE', 'path', filepath, 'Missing UNC resource path');
      if (end === unc) throw codedError('ERR_INVALID_ARG_VALUE', 'path', filepath, 'Empty UNC servername');
      const u = new URL('file://');
      u.hostname = filepath.slice(unc, end);
      u.pathname = encodePath(filepath.slice(end), true);
      return u;
    }
  }
  let resolved = windows ? win32Normalize(filepath) : path.resolve(filepath);
  // resolve drops a trailing separator: keep it.
  const last = filepath[filepath.length - 1];
  if ((last === '/' || (windows && last === '\\')) && !/[\\/]$/.test(resolved)) resolved += '/';
  const encoded = encodePath(resolved, windows);
  return new URL(`file://${windows ? '/' : ''}${encoded}`);
}

// urlToHttpOptions is Node's: the URL's own properties (a copy of a
// URL, which has none of its getters' values, works too), then the
// request options taken from it.
function urlToHttpOptions(url) {
  const { hostname, pathname, port, username, password, search } = url;
  const options = {
    __proto__: null,
    ...url,
    protocol: url.protocol,
    hostname: hostname && hostname[0] === '[' ? hostname.slice(1, -1) : hostname,
    hash: url.hash,
    search,
    pathname,
    path: `${pathname || ''}${search || ''}`,
    href: url.href,
  };
  if (port !== '') options.port = Number(port);
  if (username || password) options.auth = `${decodeURIComponent(username)}:${decodeURIComponent(password)}`;
  return options;
}

// parse is the legacy url.parse: a string only, and a parsed query as
// Node's querystring gives it (an object without prototype).
function parse(url, parseQueryString, slashesDenoteHost) {
  if (url instanceof legacy().Url) return url;
  if (typeof url !== 'string') throw codedError('ERR_INVALID_ARG_TYPE', 'url', 'of type string', url);
  const out = legacy().parse(url, parseQueryString, slashesDenoteHost);
  if (parseQueryString && out.query !== null && typeof out.query === 'object') {
    if (out.search) {
      out.query = require('./internal/builtins.js').load('querystring').parse(out.search.slice(1));
    } else {
      // No query at all: Node says so with a null search.
      out.search = null;
      out.query = { __proto__: null };
    }
  }
  return out;
}

function format(urlObject, options) {
  if (typeof urlObject === 'string') return legacy().format(parse(urlObject));
  if (typeof urlObject !== 'object' || urlObject === null) {
    throw codedError('ERR_INVALID_ARG_TYPE', 'urlObject', ['Object', 'string'], urlObject);
  }
  if (urlObject instanceof URL) return formatURL(urlObject, options);
  return legacy().format(urlObject);
}

// formatURL is url.format of a WHATWG URL, with its options.
function formatURL(u, options) {
  let fragment = true, unicode = false, search = true, auth = true;
  if (options !== undefined) {
    if (options === null || typeof options !== 'object') throw codedError('ERR_INVALID_ARG_TYPE', 'options', 'of type object', options);
    if (options.fragment !== undefined) fragment = Boolean(options.fragment);
    if (options.unicode !== undefined) unicode = Boolean(options.unicode);
    if (options.search !== undefined) search = Boolean(options.search);
    if (options.auth !== undefined) auth = Boolean(options.auth);
  }
  const c = new URL(u.href);
  if (!fragment) c.hash = '';
  if (!search) c.search = '';
  if (!auth) {
    c.username = '';
    c.password = '';
  }
  let href = c.href;
  if (unicode && c.hostname) {
    const host = require('punycode/').toUnicode(c.hostname);
    const at = href.indexOf(c.host, c.protocol.length);
    if (at !== -1) href = href.slice(0, at) + host + href.slice(at + c.hostname.length);
  }
  return href;
}

function urlResolve(source, relative) { return legacy().resolve(source, relative); }
function urlResolveObject(source, relative) { return legacy().resolveObject(source, relative); }

module.exports = {
  URL, URLSearchParams, fileURLToPath, pathToFileURL, urlToHttpOptions,
  parse, format, resolve: urlResolve, resolveObject: urlResolveObject,
  domainToASCII: (d) => { try { return new URL(`ws://${d}`).hostname; } catch { return ''; } },
  domainToUnicode: (d) => require('punycode/').toUnicode(d),
};
Object.defineProperty(module.exports, 'Url', {
  configurable: true, enumerable: true,
  get() { return legacy().Url; },
  set(v) { Object.defineProperty(module.exports, 'Url', { value: v, writable: true, configurable: true, enumerable: true }); },
});
