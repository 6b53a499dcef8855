'use strict';
// Differential harness: each scenario runs with host node's http on both
// sides (the reference) and again with ours as the server, the client or
// both; results must match. Run through run.sh.
const assert = require('assert');
const { execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const loader = require('./load.js');
const { scenarios } = require('./scenarios.js');

const node = { http: require('http'), https: require('https') };
const impl = { node, ours: null };
const MODES = (process.env.HTTPJS_MODES || 'host,polyfills').split(',');
const combos = {
  both: [['ours', 'node'], ['node', 'ours'], ['ours', 'ours']],
  server: [['ours', 'node']],
  client: [['node', 'ours']],
  expect: [['ours', 'ours']],
};
const SCENARIO_TIMEOUT = 15000;

function makeTLSKeys() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpjs-tls-'));
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', path.join(dir, 'key.pem'),
    '-out', path.join(dir, 'cert.pem'), '-days', '1', '-subj', '/CN=localhost',
    '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'], { stdio: 'ignore' });
  const keys = { key: fs.readFileSync(path.join(dir, 'key.pem')), cert: fs.readFileSync(path.join(dir, 'cert.pem')) };
  fs.rmSync(dir, { recursive: true, force: true });
  return keys;
}

function withTimeout(p, ms, what) {
  let t;
  return Promise.race([p, new Promise((_, rej) => { t = setTimeout(() => rej(new Error(`${what}: timed out after ${ms} ms`)), ms); })])
    .finally(() => clearTimeout(t));
}

async function run(sc, serverImpl, clientImpl, tlsKeys) {
  const ctx = {
    S: impl[serverImpl].http, C: impl[clientImpl].http, SS: impl[serverImpl].https, CS: impl[clientImpl].https, tlsKeys,
  };
  const r = await withTimeout(sc.fn(ctx), SCENARIO_TIMEOUT, `${sc.name} [server=${serverImpl} client=${clientImpl}]`);
  return JSON.parse(JSON.stringify(r === undefined ? null : r));
}

async function main() {
  const only = process.argv[2] ? new RegExp(process.argv[2], 'i') : null;
  const tlsKeys = makeTLSKeys();
  let passed = 0;
  let failed = 0;
  for (const mode of MODES) {
    impl.ours = loader.load(mode);
    console.log(`# mode ${mode}: ${mode === 'host' ? "host node's stream/events/buffer" : 'the npm polyfills the sandbox bundles'}`);
    const r = await runAll(only, tlsKeys, mode);
    passed += r.passed;
    failed += r.failed;
    impl.ours.http.globalAgent.destroy();
    impl.ours.https.globalAgent.destroy();
  }
  // The sandbox provides exactly these to http.js and https.js.
  const allowed = new Set(['net.js', 'tls.js', 'stream.js', 'events.js', 'buffer.js', 'url.js', 'util.js', 'timers.js', 'internal/errors.js', 'internal/primordials.js', 'llhttp']);
  const required = [...loader.required].filter((r) => !r.startsWith('internal/http/') && r !== 'http.js' && r !== 'https.js');
  const extra = required.filter((r) => !allowed.has(r));
  if (extra.length) {
    failed++;
    console.log(`FAIL requires outside the allowed set: ${extra.join(', ')}`);
  } else {
    passed++;
    console.log(`ok   requires: ${required.sort().join(' ')}`);
  }
  console.log(`${passed} passed, ${failed} failed`);
  node.http.globalAgent.destroy();
  process.exitCode = failed ? 1 : 0;
  setTimeout(() => process.exit(process.exitCode), 200).unref();
}

async function runAll(only, tlsKeys, mode) {
  let passed = 0;
  let failed = 0;
  for (const sc of scenarios) {
    if (only && !only.test(sc.name)) continue;
    let ref;
    try {
      ref = sc.vary === 'expect' ? sc.expected : await run(sc, 'node', 'node', tlsKeys);
    } catch (e) {
      failed++;
      console.log(`FAIL ${sc.name} [reference]: ${e.stack}`);
      continue;
    }
    for (const [s, c] of combos[sc.vary]) {
      const label = `${sc.name} [server=${s} client=${c}]`;
      try {
        const got = await run(sc, s, c, tlsKeys);
        assert.deepStrictEqual(got, ref);
        passed++;
        console.log(`ok   ${label} (${mode})`);
      } catch (e) {
        failed++;
        console.log(`FAIL ${label} (${mode})\n${String(e.message).split('\n').slice(0, 60).join('\n')}`);
      }
    }
  }
  if (!only || only.test('express')) {
    const r = await require('./express_test.js').run(mode);
    passed += r.passed;
    failed += r.failed;
  }
  return { passed, failed };
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
