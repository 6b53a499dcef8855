const cp = require('child_process');
const r = cp.spawnSync(process.execPath, ['-e', 'process.stdout.write("out"); process.stderr.write("err"); process.exit(7)']);
console.log(r.status, r.signal, r.stdout.toString(), r.stderr.toString());
console.log(cp.execFileSync(process.execPath, ['-e', 'console.log(JSON.stringify(process.argv.slice(1)))', 'a b', 'c'], { encoding: 'utf8' }));
try { cp.execFileSync(process.execPath, ['-e', 'process.exit(3)']); } catch (e) { console.log('status', e.status); }
const c = cp.spawn(process.execPath, ['-e', 'process.stdin.on("data", d => process.stdout.write(String(d).toUpperCase()))']);
c.stdout.on('data', (d) => console.log('child says', String(d)));
c.on('exit', (code, sig) => console.log('exit', code, sig));
c.on('close', (code) => {
  console.log('close', code);
  cp.execFile(process.execPath, ['-p', '6*7'], (err, stdout, stderr) => console.log('execFile', err, JSON.stringify(stdout), JSON.stringify(stderr)));
});
c.stdin.end('shout');
