'use strict';
// express on our http: a child node process puts our module in
// require.cache under 'http' (so require('http') in express and its
// dependencies returns it), serves a few JSON routes; host node's http
// client fetches them. The same app on host node's http is the reference.
const { spawn } = require('child_process');
const assert = require('assert');
const http = require('http');
const path = require('path');
const { body } = require('./util.js');

function startApp(useOurs, mode) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(__dirname, 'express_app.js')], {
      env: { ...process.env, HTTPJS_USE_OURS: useOurs ? mode : '' }, stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /listening (\d+) (\S+)/.exec(out);
      if (m) resolve({ child, port: +m[1], which: m[2] });
    });
    child.on('exit', (code) => reject(new Error(`express app exited ${code}`)));
  });
}

function fetch(port, method, p, payload, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request({ port, host: '127.0.0.1', method, path: p, headers, agent: false }, async (res) => {
      const b = await body(res);
      const h = { ...res.headers };
      delete h.date;
      resolve({ status: res.statusCode, headers: h, body: b });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

async function exercise(port) {
  const out = [];
  out.push(await fetch(port, 'GET', '/api/items?limit=2'));
  out.push(await fetch(port, 'POST', '/api/items', JSON.stringify({ name: 'widget', n: 3 }), { 'Content-Type': 'application/json' }));
  out.push(await fetch(port, 'POST', '/api/items', '{bad json', { 'Content-Type': 'application/json' }));
  out.push(await fetch(port, 'GET', '/api/items/7'));
  out.push(await fetch(port, 'GET', '/missing'));
  out.push(await fetch(port, 'HEAD', '/api/items?limit=1'));
  out.push(await fetch(port, 'GET', '/api/stream'));
  return out;
}

async function run(mode = 'host') {
  let passed = 0;
  let failed = 0;
  const results = {};
  for (const useOurs of [false, true]) {
    const { child, port, which } = await startApp(useOurs, mode);
    try {
      results[which] = await exercise(port);
    } finally {
      child.kill();
    }
  }
  try {
    assert.deepStrictEqual(results.ours, results.node);
    passed++;
    console.log(`ok   express app (JSON routes, errors, HEAD, 404, streaming) on our http [${results.ours.length} requests] (${mode})`);
  } catch (e) {
    failed++;
    console.log(`FAIL express app (${mode})\n${String(e.message).split('\n').slice(0, 60).join('\n')}`);
  }
  return { passed, failed };
}

module.exports = { run };
