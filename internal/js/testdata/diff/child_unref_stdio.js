// A child whose process and stdio pipes are unreferenced does not keep
// its parent alive (esbuild leaves its idle service so): the parent ends
// while the child still runs. Referenced again, a pipe holds the loop.
const { spawn } = require('node:child_process');
const c = spawn(process.execPath, ['-e', 'process.stdin.resume(); setTimeout(() => {}, 3000)'], { stdio: ['pipe', 'pipe', 'ignore'] });
c.stdout.on('data', () => {});
console.log(typeof c.stdin.ref, typeof c.stdin.unref, typeof c.stdout.ref, typeof c.stdout.unref);
console.log(c.stdout.unref() === c.stdout, c.stdin.unref() === c.stdin);
c.unref();
process.on('exit', () => console.log('exit; child still running:', c.exitCode === null && c.signalCode === null));
