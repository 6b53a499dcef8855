// A vm context's global is not this isolate's: what a test runner
// installs there (jest's environment sets `process`, timers and more on
// `runInContext('this', ctx)`) must not replace the main program's own,
// or its exit code is lost (jest exited 0 with a failing test).
const vm = require('vm');
const ctx = vm.createContext({ seed: 1 });
const g = vm.runInContext('this', ctx);
console.log('main global', g === globalThis);
g.process = { fake: true, exitCode: 0 };
g.installed = 'yes';
console.log('main process kept', typeof process.on, process.fake === undefined);
console.log('main has installed', typeof installed);
console.log('context sees', vm.runInContext('typeof process.on + " " + process.fake + " " + installed + " " + seed', ctx));
console.log('sandbox reflects', ctx.installed, ctx.seed);
vm.runInContext('seed = 2; fresh = 3', ctx);
console.log('writes land in the sandbox', ctx.seed, ctx.fresh, typeof fresh);
console.log('runInNewContext', vm.runInNewContext('a + b', { a: 1, b: 2 }));
process.on('exit', () => { process.exitCode = 3; });
// Code run in a context is named by its filename in stack traces.
const fn = vm.runInContext('(function thrower() { throw new Error("x"); })', ctx, { filename: '/virtual/ctx-file.js' });
try { fn(); } catch (e) { console.log('frame', e.stack.split('\n')[1].trim()); }
