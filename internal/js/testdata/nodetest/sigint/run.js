// node --test stopped by SIGINT once it has printed something: it ends
// with status 1, no signal, its output a TAP stream.
const { spawn } = require('node:child_process');
const child = spawn(process.execPath, ['--test', '--test-reporter=tap', 'never.js']);
let out = '';
child.stdout.setEncoding('utf8');
child.stdout.on('data', (chunk) => {
  if (out === '') child.kill('SIGINT');
  out += chunk;
});
child.on('exit', (code, signal) => {
  console.log(JSON.stringify({ code, signal, tap: out.startsWith('TAP version 13\n') }));
});
