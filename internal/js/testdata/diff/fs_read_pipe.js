// fs.read on a pipe waits without stopping the loop: a child reading its
// stdin with fs.read still runs its timers (Go WebAssembly programs and
// esbuild-wasm's service read stdin so), and the read completes when the
// parent writes.
const fs = require('node:fs');
if (process.argv[2] === 'child') {
  const buf = Buffer.alloc(64);
  fs.read(0, buf, 0, buf.length, null, (err, n, b) => {
    fs.writeSync(1, `read ${err ? err.code : n} ${JSON.stringify(b.subarray(0, n).toString())} ${b === buf}\n`);
    fs.read(0, { buffer: Buffer.alloc(8) }, (err2, n2) => fs.writeSync(1, `then ${err2 ? err2.code : n2}\n`));
  });
  setTimeout(() => fs.writeSync(1, 'timer\n'), 20);
} else {
  const { spawn } = require('node:child_process');
  const c = spawn(process.execPath, [__filename, 'child'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const guard = setTimeout(() => { console.log('stuck'); c.kill(); }, 20000);
  let out = '';
  c.stdout.on('data', (d) => {
    out += d;
    if (out === 'timer\n') c.stdin.write('ping');
    if (out.includes('read ')) c.stdin.end();
  });
  c.on('close', (code) => {
    clearTimeout(guard);
    process.stdout.write(out + `exit ${code}\n`);
  });
}
