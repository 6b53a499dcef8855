// child_process.fork and stdio 'ipc': messages, disconnects and errors
// as Node reports them. Children only talk through messages and piped
// output, so the output order is deterministic.
const fs = require('fs');
const { fork, spawn } = require('child_process');
const out = [];
const log = (s) => out.push(s);

fs.writeFileSync('echo.js', `
process.on('message', (m) => {
  if (m === 'bye') { process.disconnect(); return; }
  process.send({ echo: m, connected: process.connected, env: process.env.NODE_CHANNEL_FD === undefined, argv: process.argv.slice(2) });
});
process.on('disconnect', () => console.log('child: disconnect', process.connected, process.channel));
process.on('exit', (c) => console.log('child: exit', c));
console.log('child: started', typeof process.send, typeof process.channel.ref, typeof process.disconnect);
`);
fs.writeFileSync('once.mjs', `
import { basename } from 'node:path';
process.send({ from: basename(process.argv[1]), n: 42, nested: { a: [1, 'two', null, true] }, s: 'h\u00e9\\n"q"' });
`);
fs.writeFileSync('listens.js', `
process.on('message', (m) => { process.send(m * 2); if (m === 3) process.removeAllListeners('message'); });
`);

function t1(next) {
  const c = fork('./echo.js', ['a', 'b'], { silent: true });
  log('t1 connected ' + c.connected + ' stdio ' + c.stdio.length + ' ' + (c.stdio[3] === null) + ' pid ' + (c.pid > 0));
  let text = '';
  c.stdout.on('data', (d) => { text += d; });
  c.on('message', (m) => {
    log('t1 got ' + JSON.stringify(m));
    if (m.echo === 3) c.send('bye');
    else c.send(m.echo + 1);
  });
  c.on('disconnect', () => log('t1 disconnect ' + c.connected + ' ' + c.channel));
  c.on('exit', (code, sig) => log('t1 exit ' + code + ' ' + sig));
  c.on('close', (code, sig) => { log('t1 close ' + code + ' ' + sig + '\n' + text.trim()); next(); });
  log('t1 send ' + c.send(1, (err) => log('t1 sent ' + err)));
}

function t2(next) {
  const c = fork('./echo.js', [], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  let text = '';
  c.stdout.on('data', (d) => { text += d; });
  c.once('message', (m) => {
    log('t2 got ' + m.echo);
    c.disconnect();
    log('t2 after disconnect ' + c.connected + ' ' + c.channel);
    c.send('late', (err) => log('t2 late ' + err.code + ' ' + err.message));
    c.disconnect();
  });
  c.on('error', (e) => log('t2 error ' + e.code + ' ' + e.message));
  c.on('disconnect', () => log('t2 disconnect'));
  c.on('exit', (code) => { log('t2 exit ' + code + '\n' + text.trim()); next(); });
  try { c.send(); } catch (e) { log('t2 ' + e.name + ' ' + e.code + ' ' + e.message); }
  try { c.send(() => {}); } catch (e) { log('t2 ' + e.code); }
  c.send('x');
}

function t3(next) {
  const c = fork('./once.mjs');
  c.on('message', (m) => log('t3 got ' + JSON.stringify(m)));
  c.on('disconnect', () => log('t3 disconnect'));
  c.on('exit', (code) => log('t3 exit ' + code));
  c.on('close', () => { log('t3 close'); next(); });
}

function t4(next) {
  // The child keeps running while it listens; it stops listening at 3.
  const c = fork('./listens.js');
  let n = 0;
  c.on('message', (m) => { log('t4 got ' + m); if (++n < 3) c.send(n + 1); });
  c.on('exit', (code) => { log('t4 exit ' + code); next(); });
  c.send(1);
}

function t5(next) {
  try { fork('./echo.js', [], { stdio: ['pipe', 'pipe', 'pipe'] }); } catch (e) { log('t5 ' + e.code + ' ' + e.message); }
  try { spawn(process.execPath, ['x'], { stdio: ['ipc', 'ipc', 'pipe'] }); } catch (e) { log('t5 ' + e.code + ' ' + e.message); }
  try { require('child_process').spawnSync(process.execPath, ['x'], { stdio: ['pipe', 'pipe', 'pipe', 'ipc'] }); } catch (e) { log('t5 ' + e.code + ' ' + e.message); }
  // spawn with an 'ipc' entry is fork by another name.
  const c = spawn(process.execPath, ['echo.js'], { stdio: ['ignore', 'ignore', 'ignore', 'ipc'] });
  c.on('message', (m) => { log('t5 got ' + JSON.stringify(m)); c.disconnect(); });
  c.on('exit', (code) => { log('t5 exit ' + code); next(); });
  c.send('via-spawn');
}

function t6(next) {
  fs.writeFileSync('adv.js', `process.on('message', (m) => { process.send({ isMap: m instanceof Map, size: m.size, big: typeof m.get('b'), date: m.get('d') instanceof Date }); process.disconnect(); });`);
  const c = fork('./adv.js', { serialization: 'advanced' });
  c.on('message', (m) => log('t6 got ' + JSON.stringify(m)));
  c.on('exit', (code) => { log('t6 exit ' + code); next(); });
  c.send(new Map([['a', 1], ['b', 2n], ['d', new Date(0)]]));
}

t1(() => t2(() => t3(() => t4(() => t5(() => t6(() => console.log(out.join('\n'))))))));
