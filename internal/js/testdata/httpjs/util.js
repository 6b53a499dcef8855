'use strict';
// Helpers for the differential scenarios: every network address is
// 127.0.0.1, every wait is bounded.
const net = require('net');

function listen(server) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server.address().port));
  });
}

function closeServer(server) {
  return new Promise((resolve) => {
    if (server.closeAllConnections) server.closeAllConnections();
    server.close(() => resolve());
  });
}

function body(stream) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    stream.on('data', (d) => chunks.push(Buffer.from(d)));
    stream.on('end', () => resolve(Buffer.concat(chunks).toString('latin1')));
    // An aborted stream resolves (handlers must not reject unhandled).
    stream.on('error', (e) => resolve(`<error ${e.code}>`));
    void reject;
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// raw sends bytes on a plain TCP connection and returns what came back
// until the server closed (closed: true) or waitMs passed.
function raw(port, data, { waitMs = 400, endAfterWrite = false, chunks } = {}) {
  return new Promise((resolve) => {
    const c = net.connect(port, '127.0.0.1');
    const out = [];
    let done = false;
    const finish = (closed) => {
      if (done) return;
      done = true;
      c.destroy();
      resolve({ text: normalizeRaw(Buffer.concat(out).toString('latin1')), closed });
    };
    c.on('data', (d) => out.push(d));
    c.on('close', () => finish(true));
    c.on('error', () => {});
    c.on('connect', async () => {
      if (chunks) {
        for (const ch of chunks) {
          c.write(Buffer.from(ch, 'latin1'));
          await sleep(20);
        }
      } else {
        c.write(Buffer.from(data, 'latin1'));
      }
      if (endAfterWrite) c.end();
    });
    setTimeout(() => finish(false), waitMs);
  });
}

function normalizeRaw(s) {
  return s.replace(/\r\nDate: [^\r]*/g, '\r\nDate: <date>');
}

// headers without the values that differ between runs.
function cleanHeaders(h, port) {
  const out = {};
  for (const k of Object.keys(h)) {
    if (k === 'date') out[k] = '<date>';
    else out[k] = typeof h[k] === 'string' ? h[k].replace(String(port), '<port>') : h[k];
  }
  return out;
}

function cleanRaw(raw, port) {
  const out = [];
  for (let i = 0; i < raw.length; i += 2) {
    const v = /^date$/i.test(raw[i]) ? '<date>' : String(raw[i + 1]).replace(String(port), '<port>');
    out.push(raw[i], v);
  }
  return out;
}

function errInfo(e) {
  if (!e) return null;
  return { name: e.name, code: e.code, message: e.message, syscall: e.syscall };
}

module.exports = { listen, closeServer, body, sleep, raw, cleanHeaders, cleanRaw, errInfo };
