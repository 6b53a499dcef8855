'use strict';
// process and os state as Node has it: credentials checks, kill through
// _kill, reallyExit, _fatalException, frozen config, read-only os
// constants, priorities, the loopback interface.
const os = require('os');
const cp = require('child_process');

const errOf = (fn) => { try { fn(); return 'no error'; } catch (e) { return `${e.name} ${e.code} ${e.message}`; } };
console.log(errOf(() => process.setuid({})));
console.log(errOf(() => process.seteuid('no-such-user-here')));
console.log(errOf(() => process.setgroups([1, -1])).split(' ').slice(0, 2).join(' '));
console.log(errOf(() => process.initgroups('no-such-user-here', 'no-such-group-here')));
console.log(errOf(() => process.kill(0, 987)));
console.log(errOf(() => process.kill(0, 'test')));
const orig = process._kill;
process._kill = (pid, sig) => { console.log('_kill', pid, sig); process._kill = orig; return 0; };
console.log(process.kill(0, 'SIGHUP'));
console.log(errOf(() => process.assert(false)));
console.log(Object.isFrozen(process.config), errOf(() => { process.config.variables = 1; }).split(' ')[0]);
process.env[''] = '';
console.log('empty env name', process.env['']);
console.log(process.constructor.name, Object.getPrototypeOf(process) instanceof require('events'));

console.log(errOf(() => { os.EOL = 'x'; }).split(' ')[0], Object.getOwnPropertyDescriptor(os, 'constants').configurable);
console.log(`${os.platform}`, `${os.type}`, `${os.endianness}`);
console.log(errOf(() => os.setPriority(0, 20)).split(' ').slice(0, 2).join(' '));
console.log(errOf(() => os.getPriority('x')).split(' ').slice(0, 2).join(' '));
os.setPriority(0, 5);
os.setPriority(process.pid, 7);
console.log('priority', os.getPriority(), os.getPriority(process.pid));
console.log(errOf(() => os.getPriority(-1)).split(' ').slice(0, 2).join(' '));
console.log(JSON.stringify(os.networkInterfaces().lo.filter((e) => e.family === 'IPv4')));

const run = (code) => {
  const r = cp.spawnSync(process.execPath, ['-e', code]);
  return `${r.status} ${JSON.stringify(String(r.stdout))}`;
};
console.log(run("process.reallyExit = () => console.log('really'); process.exit(3); console.log('went on')"));
console.log(run("process._fatalException = undefined; throw new Error('x')"));
console.log(run("process.stdout.destroy(); console.log('still writes')"));
