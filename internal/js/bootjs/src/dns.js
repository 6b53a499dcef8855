'use strict';
// dns: name lookups through the kernel (kernel/netstack), which applies
// the VM's network policy ("dns" rules) and its resolver. The kernel
// answers address queries only: lookup, resolve, resolve4 and resolve6
// work; record types it cannot ask for (MX, TXT, SRV, ...) fail with
// ENOTIMP rather than with a made-up answer.
const { B } = require('./internal/bridge.js');
const { codedError } = require('./internal/errors.js');

// Node's getaddrinfo and c-ares error codes, by the kernel's errno.
const codeOf = { ENOENT: 'ENOTFOUND', EAGAIN: 'EAI_AGAIN', ETIMEDOUT: 'ETIMEOUT', EINVAL: 'EINVAL' };
const errnos = { ENOTFOUND: -3008, EAI_AGAIN: -3001 };

function dnsException(code, syscall, hostname) {
  const c = codeOf[code] || code;
  const err = new Error(`${syscall} ${c}${hostname ? ` ${hostname}` : ''}`);
  err.errno = errnos[c] || undefined;
  err.code = c;
  err.syscall = syscall;
  if (hostname) err.hostname = hostname;
  return err;
}

function familyOf(f) {
  if (f === undefined || f === null || f === 0) return 0;
  if (f === 4 || f === 'IPv4') return 4;
  if (f === 6 || f === 'IPv6') return 6;
  throw codedError('ERR_INVALID_ARG_VALUE', 'options.family', f);
}

let defaultOrder = 'verbatim';

// query asks the kernel for the addresses of hostname and calls
// cb(err, [{address, family}]) on a later turn of the loop.
function query(hostname, syscall, cb) {
  const net = require('./net.js');
  const ip = net.isIP(hostname);
  if (ip) {
    process.nextTick(cb, null, [{ address: hostname, family: ip }]);
    return;
  }
  try {
    net._request((id) => B.dnsLookup(hostname, id), (code, payload) => {
      if (code) { cb(dnsException(code, syscall, hostname)); return; }
      const list = JSON.parse(payload).map((a) => ({ address: a.address, family: a.family === 'IPv6' ? 6 : 4 }));
      cb(null, list);
    });
  } catch (e) {
    process.nextTick(cb, dnsException(typeof e === 'string' ? e : 'EINVAL', syscall, hostname));
  }
}

function lookup(hostname, options, callback) {
  if (typeof options === 'function') { callback = options; options = {}; }
  if (typeof callback !== 'function') throw codedError('ERR_INVALID_ARG_TYPE', 'callback', 'of type function', callback);
  if (typeof options === 'number') options = { family: options };
  options = options || {};
  if (hostname !== undefined && hostname !== null && typeof hostname !== 'string') {
    throw codedError('ERR_INVALID_ARG_TYPE', 'hostname', 'of type string', hostname);
  }
  const family = familyOf(options.family);
  const all = !!options.all;
  let order = options.order || (options.verbatim === false ? 'ipv4first' : options.verbatim === true ? 'verbatim' : defaultOrder);
  if (!hostname) {
    process.nextTick(() => (all ? callback(null, []) : callback(null, null, family === 6 ? 6 : 4)));
    return {};
  }
  query(hostname, 'getaddrinfo', (err, list) => {
    if (err) { callback(err); return; }
    let out = family ? list.filter((a) => a.family === family) : list;
    if (order === 'ipv4first') out = [...out].sort((a, b) => a.family - b.family);
    else if (order === 'ipv6first') out = [...out].sort((a, b) => b.family - a.family);
    if (out.length === 0) { callback(dnsException('ENOENT', 'getaddrinfo', hostname)); return; }
    if (all) callback(null, out);
    else callback(null, out[0].address, out[0].family);
  });
  return {};
}

function lookupService(address, port, callback) {
  process.nextTick(callback, dnsException('ENOTIMP', 'getnameinfo', address));
}

// resolver answers one record type; addresses come from the kernel,
// other types are not available.
function resolver(rrtype) {
  return function resolve(hostname, options, callback) {
    if (typeof options === 'function') { callback = options; options = {}; }
    if (typeof hostname !== 'string') throw codedError('ERR_INVALID_ARG_TYPE', 'name', 'of type string', hostname);
    if (typeof callback !== 'function') throw codedError('ERR_INVALID_ARG_TYPE', 'callback', 'of type function', callback);
    const syscall = `query${rrtype[0]}${rrtype.slice(1).toLowerCase()}`;
    if (rrtype !== 'A' && rrtype !== 'AAAA' && rrtype !== 'ANY') {
      process.nextTick(callback, dnsException('ENOTIMP', syscall, hostname));
      return {};
    }
    query(hostname, syscall, (err, list) => {
      if (err) { callback(err); return; }
      const want = rrtype === 'A' ? [4] : rrtype === 'AAAA' ? [6] : [4, 6];
      const hits = list.filter((a) => want.includes(a.family));
      if (hits.length === 0) { callback(dnsException('ENODATA', syscall, hostname)); return; }
      if (rrtype === 'ANY') callback(null, hits.map((a) => ({ type: a.family === 4 ? 'A' : 'AAAA', address: a.address, ttl: 0 })));
      else if (options && options.ttl) callback(null, hits.map((a) => ({ address: a.address, ttl: 0 })));
      else callback(null, hits.map((a) => a.address));
    });
    return {};
  };
}

const rrtypes = { resolve4: 'A', resolve6: 'AAAA', resolveAny: 'ANY', resolveCaa: 'CAA', resolveCname: 'CNAME',
  resolveMx: 'MX', resolveNaptr: 'NAPTR', resolveNs: 'NS', resolvePtr: 'PTR', resolveSoa: 'SOA', resolveSrv: 'SRV', resolveTxt: 'TXT' };

function resolve(hostname, rrtype, callback) {
  if (typeof rrtype === 'function') { callback = rrtype; rrtype = 'A'; }
  if (typeof rrtype !== 'string') throw codedError('ERR_INVALID_ARG_TYPE', 'rrtype', 'of type string', rrtype);
  return resolver(rrtype)(hostname, {}, callback);
}

function reverse(ip, callback) {
  process.nextTick(callback, dnsException('ENOTIMP', 'getHostByAddr', ip));
}

let servers = ['127.0.0.53'];

// checkServers is Node's setServers check: an array of addresses, each
// optionally with a port ("1.2.3.4:53", "[::1]:53"); it returns them as
// getServers shows them (the port only when it is not 53). The kernel's
// resolver answers every query: the list is kept, not used.
function checkServers(list) {
  const net = require('./net.js');
  if (!Array.isArray(list)) throw codedError('ERR_INVALID_ARG_TYPE', 'servers', 'an instance of Array', list);
  const out = [];
  // forEach, as Node's: holes are skipped.
  list.forEach((serv, i) => {
    if (typeof serv !== 'string') throw codedError('ERR_INVALID_ARG_TYPE', `servers[${i}]`, 'of type string', serv);
    let ip = serv;
    let port = 53;
    const bracket = /^\[([^[\]]*)\](?::(\d+))?$/.exec(serv);
    const split = /^(.+?)(?::(\d+))?$/.exec(serv);
    if (net.isIP(serv)) ip = serv;
    else if (bracket && net.isIPv6(bracket[1])) [ip, port] = [bracket[1], parseInt(bracket[2], 10) || 53];
    else if (split && net.isIP(split[1])) [ip, port] = [split[1], parseInt(split[2], 10) || 53];
    else throw codedError('ERR_INVALID_IP_ADDRESS', serv);
    if (port === 53) out.push(ip);
    else out.push(net.isIPv6(ip) ? `[${ip}]:${port}` : `${ip}:${port}`);
  });
  return out;
}

// localAddressError is the error of the binding's setLocalAddress.
function localAddressError(msg) {
  const err = new TypeError(msg);
  err.code = 'ERR_INVALID_ARG_VALUE';
  return err;
}

class Resolver {
  constructor() { this._servers = servers.slice(); this._localAddress = null; }
  getServers() { return this._servers.slice(); }
  setServers(s) { this._servers = checkServers(s); }
  // setLocalAddress checks the addresses queries are to come from, as
  // Node does; the kernel's resolver picks its own.
  setLocalAddress(ipv4, ipv6) {
    const net = require('./net.js');
    if (typeof ipv4 !== 'string') throw codedError('ERR_INVALID_ARG_TYPE', 'ipv4', 'of type string', ipv4);
    if (ipv6 !== undefined && typeof ipv6 !== 'string') throw codedError('ERR_INVALID_ARG_TYPE', 'ipv6', 'of type string', ipv6);
    const first = net.isIP(ipv4);
    if (first === 0) throw localAddressError('Invalid IP address.');
    if (ipv6 !== undefined) {
      const second = net.isIP(ipv6);
      if (second === 0) throw localAddressError('Invalid IP address.');
      if (second === first) throw localAddressError(`Cannot specify two IPv${first} addresses.`);
    }
    this._localAddress = [ipv4, ipv6];
  }
  cancel() {}
}
Resolver.prototype.resolve = resolve;
Resolver.prototype.reverse = reverse;
for (const [name, rr] of Object.entries(rrtypes)) Resolver.prototype[name] = resolver(rr);

// promisify runs fn at once, so that its argument checks throw as
// Node's dns.promises functions do rather than reject.
const promisify = (fn, multi) => (...args) => {
  let resolve;
  let reject;
  const p = new Promise((res, rej) => { resolve = res; reject = rej; });
  fn(...args, (err, a, b) => (err ? reject(err) : resolve(multi && typeof a === 'string' ? { address: a, family: b } : a)));
  return p;
};

function makePromises() {
  class PResolver extends Resolver {}
  const p = {
    lookup: promisify(lookup, true),
    lookupService: promisify(lookupService),
    // The promise API's rrtype defaults to 'A'.
    resolve: (hostname, rrtype = 'A') => promisify(resolve)(hostname, rrtype),
    reverse: promisify(reverse),
    Resolver: PResolver,
    getServers: () => servers.slice(),
    setServers: (s) => { servers = checkServers(s); },
    setDefaultResultOrder: (o) => { defaultOrder = o; },
    getDefaultResultOrder: () => defaultOrder,
    ...codes,
  };
  for (const [name, rr] of Object.entries(rrtypes)) {
    p[name] = promisify(resolver(rr));
    PResolver.prototype[name] = p[name];
  }
  PResolver.prototype.resolve = p.resolve;
  PResolver.prototype.reverse = p.reverse;
  return p;
}

const codes = {
  NODATA: 'ENODATA', FORMERR: 'EFORMERR', SERVFAIL: 'ESERVFAIL', NOTFOUND: 'ENOTFOUND', NOTIMP: 'ENOTIMP',
  REFUSED: 'EREFUSED', BADQUERY: 'EBADQUERY', BADNAME: 'EBADNAME', BADFAMILY: 'EBADFAMILY', BADRESP: 'EBADRESP',
  CONNREFUSED: 'ECONNREFUSED', TIMEOUT: 'ETIMEOUT', EOF: 'EOF', FILE: 'EFILE', NOMEM: 'ENOMEM', DESTRUCTION: 'EDESTRUCTION',
  BADSTR: 'EBADSTR', BADFLAGS: 'EBADFLAGS', NONAME: 'ENONAME', BADHINTS: 'EBADHINTS', NOTINITIALIZED: 'ENOTINITIALIZED',
  LOADIPHLPAPI: 'ELOADIPHLPAPI', ADDRGETNETWORKPARAMS: 'EADDRGETNETWORKPARAMS', CANCELLED: 'ECANCELLED',
};

const dns = {
  lookup,
  lookupService,
  resolve,
  reverse,
  Resolver,
  getServers: () => servers.slice(),
  setServers: (s) => { servers = checkServers(s); },
  setDefaultResultOrder: (o) => { defaultOrder = o; },
  getDefaultResultOrder: () => defaultOrder,
  ADDRCONFIG: 1024,
  V4MAPPED: 2048,
  ALL: 256,
  ...codes,
};
for (const [name, rr] of Object.entries(rrtypes)) dns[name] = resolver(rr);
let promises;
Object.defineProperty(dns, 'promises', { enumerable: true, get() { return promises || (promises = makePromises()); } });

module.exports = dns;
