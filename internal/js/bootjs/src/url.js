'use strict';
// url: WHATWG URL (whatwg-url) and the legacy API (url polyfill), plus
// the file URL helpers.
const legacy = require('url/');
const { codedError } = require('./internal/errors.js');
const { URL, URLSearchParams } = require('./internal/whatwg_url.js');

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

function pathToFileURL(p) {
  const path = require('./path.js');
  let resolved = path.resolve(p);
  if (p.endsWith('/') && !resolved.endsWith('/')) resolved += '/';
  const u = new URL('file://');
  u.pathname = resolved.replace(/%/g, '%25').replace(/\\/g, '%5C').replace(/\n/g, '%0A').replace(/\r/g, '%0D').replace(/\t/g, '%09');
  return u;
}

function urlToHttpOptions(u) {
  return {
    protocol: u.protocol, hostname: u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname,
    hash: u.hash, search: u.search, pathname: u.pathname, path: `${u.pathname || ''}${u.search || ''}`, href: u.href,
    port: u.port !== '' ? Number(u.port) : undefined,
    auth: u.username || u.password ? `${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}` : undefined,
  };
}

module.exports = {
  URL, URLSearchParams, fileURLToPath, pathToFileURL, urlToHttpOptions,
  parse: legacy.parse, format: (u, o) => (u instanceof URL ? u.href : legacy.format(u, o)), resolve: legacy.resolve,
  resolveObject: legacy.resolveObject, Url: legacy.Url,
  domainToASCII: (d) => { try { return new URL(`ws://${d}`).hostname; } catch { return ''; } },
  domainToUnicode: (d) => require('punycode/').toUnicode(d),
};
