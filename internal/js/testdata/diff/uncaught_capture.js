'use strict';
// process.setUncaughtExceptionCaptureCallback's checks, the status of a
// process whose uncaught-exception handler throws (7), and
// --abort-on-uncaught-exception (no listener runs; the process aborts).
const { spawnSync } = require('child_process');

function code(fn) { try { fn(); return 'no error'; } catch (e) { return `${e.code} ${e.name}: ${e.message}`; } }
console.log(code(() => process.setUncaughtExceptionCaptureCallback(1)));
console.log(code(() => process.setUncaughtExceptionCaptureCallback({})));
console.log(process.hasUncaughtExceptionCaptureCallback());
process.setUncaughtExceptionCaptureCallback(() => {});
console.log(process.hasUncaughtExceptionCaptureCallback());
console.log(code(() => process.setUncaughtExceptionCaptureCallback(() => {})));
console.log(code(() => require('domain')));
process.setUncaughtExceptionCaptureCallback(null);
console.log(process.hasUncaughtExceptionCaptureCallback(), typeof require('domain').create);

function run(args) {
  const r = spawnSync(process.execPath, args, { encoding: 'utf8' });
  const aborted = [132, 133, 134].includes(r.status) || ['SIGILL', 'SIGTRAP', 'SIGABRT'].includes(r.signal);
  return { status: aborted ? 'aborted' : r.status, stdout: r.stdout, err: r.stderr.split('\n').filter((l) => /^(Uncaught|FROM|Error)/.test(l)) };
}
const listenerThrows = "process.on('uncaughtException', () => { throw new Error('from listener') }); throw new Error('x')";
console.log(run(['-e', listenerThrows]));
console.log(run(['-e', "process.setUncaughtExceptionCaptureCallback(() => { throw new Error('from capture') }); throw new Error('x')"]));
const withListener = "process.on('uncaughtException', () => console.log('listener')); setTimeout(function f() { throw new Error('boom') }, 1)";
console.log(run(['-e', withListener]));
console.log(run(['--abort-on-uncaught-exception', '-e', withListener]));
// A domain with an 'error' listener takes the error before any abort.
console.log(run(['--abort-on-uncaught-exception', '-e', "const d = require('domain').create(); d.on('error', (e) => console.log('domain', e.message)); d.run(() => setTimeout(() => { throw new Error('caught') }, 1))"]));
console.log(run(['--abort-on-uncaught-exception', '-e', "require('domain').create().run(() => { throw new Error('no handler') })"]));
// Underscores for dashes, as V8 spells its flags; a domain handler that
// throws is not caught by anything, so the process aborts.
console.log(run(['--abort_on_uncaught_exception', '-e', "const d = require('domain').create(); d.on('error', () => { throw new Error('from handler') }); d.run(() => { throw new Error('first') })"]));
