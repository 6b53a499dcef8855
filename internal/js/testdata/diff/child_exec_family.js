'use strict';
// The exec family as Node's: argument normalisation, maxBuffer on the
// asynchronous and synchronous forms, the promisified forms, a spawn that
// fails at run time, inherited env keys, argv0 and execArgv as given.
const cp = require('child_process');
const { promisify } = require('util');

const codeOf = (fn) => { try { fn(); return 'no error'; } catch (e) { return e.code; } };
console.log('execFile string args', codeOf(() => cp.execFile('x', 'x', () => {})));
console.log('execFile string options', codeOf(() => cp.execFile('x', [], 'x', () => {})));
console.log('execFile string callback', codeOf(() => cp.execFile('x', [], {}, 'x')));
console.log('fork array options', codeOf(() => cp.fork('x.js', [], [])));
console.log('exec bad signal', codeOf(() => cp.exec('x', { signal: {} })));

const node = process.execPath;
try {
  cp.execFileSync(node, ['-e', 'console.log("hello")'], { maxBuffer: 1 });
} catch (e) {
  console.log('execSync maxBuffer', e.code, require('util').getSystemErrorName(e.errno), JSON.stringify(String(e.stdout)));
}
const sync = cp.spawnSync(node, ['-e', 'console.log(process.env.FOO)'], { env: Object.create({ FOO: 'inherited' }) });
console.log('inherited env', String(sync.stdout).trim());
const argv0 = cp.spawnSync(process.execPath, ['-e', 'console.log(process.argv0)'], { argv0: 'custom' });
console.log('argv0', String(argv0.stdout).trim());
const ea = cp.spawnSync(process.execPath, ['--stack-size=256', '-e', 'console.log(JSON.stringify(process.execArgv.slice(0, 1)))']);
console.log('execArgv', String(ea.stdout).trim());

cp.execFile(node, ['-e', 'console.log("hello")'], { maxBuffer: 1 }, (err, stdout) => {
  console.log('exec maxBuffer', err.code, JSON.stringify(stdout));
  promisify(cp.execFile)(node, ['-e', 'console.log("promised")']).then(({ stdout }) => {
    console.log('promisified', stdout.trim());
    const p = promisify(cp.execFile)(node, ['-e', 'process.exit(3)']);
    console.log('promise child', typeof p.child.pid);
    return p.catch((e) => console.log('rejected', e.code, e.cmd.endsWith(' -e process.exit(3)')));
  }).then(() => {
    const child = cp.spawn(node, ['-e', ''], { cwd: '/does-not-exist' });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.on('error', (e) => console.log('spawn error', e.code, typeof child.pid));
    child.on('close', () => console.log('spawn close', JSON.stringify(out), child.stdin.readable, child.stdout.writable));
  });
});
