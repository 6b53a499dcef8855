// child_process argument checks (Node's normalizeSpawnArguments): which
// error, code and message, before anything is spawned; String(err)
// carries the code.
const cp = require('child_process');

function show(label, f) {
  try {
    f();
    console.log(label, 'no error');
  } catch (e) {
    console.log(label, String(e).replace(/\0/g, '\\0'));
  }
}

const bad = [0, true, [], {}, 'a\u0000b', -1, 1.5, 'SIGNOPE', () => {}];
for (const option of ['cwd', 'detached', 'uid', 'gid', 'shell', 'argv0', 'timeout', 'maxBuffer', 'killSignal', 'windowsHide']) {
  for (const v of bad) {
    const label = `spawnSync ${option}=${typeof v === 'string' ? JSON.stringify(v) : typeof v === 'function' ? 'fn' : JSON.stringify(v)}`;
    try {
      const r = cp.spawnSync('not_a_real_command', { [option]: v });
      // (The VM's processes take no uid or gid: the host's setuid(-1) fails;
      // the test VM has no /bin/sh for shell.)
      if (!['uid', 'gid', 'shell'].includes(option)) console.log(label, 'ran:', r.error ? r.error.code : r.status);
    } catch (e) {
      console.log(label, String(e).replace(/\0/g, '\\0'));
    }
  }
}
show('spawn signal {}', () => cp.spawn('x', { signal: {} }));
show('spawn timeout "bad"', () => cp.spawn('x', { timeout: 'bad' }));
show('spawn args 1', () => cp.spawn('x', 1));
show('spawn file 1', () => cp.spawn(1));
show('spawn args NUL', () => cp.spawn('x', ['a\u0000']));
show('spawn env NUL', () => cp.spawn('x', { env: { A: 'b\u0000' } }));
show('exec NUL', () => cp.exec('a\u0000b', () => {}));
show('execSync 1', () => cp.execSync(1));
show('fork stdio "33"', () => cp.fork('x.js', { stdio: '33' }));
