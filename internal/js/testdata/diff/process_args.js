// process argument checks and process.env's conversions, as Node's.
function show(label, f) {
  try {
    console.log(label, 'ok', JSON.stringify(f()));
  } catch (e) {
    console.log(label, e.name, e.code, e.message);
  }
}

for (const v of [1, 'x', [1], [1, 2, 3], {}]) show(`hrtime(${JSON.stringify(v)})`, () => typeof process.hrtime(v));
for (const v of [1, {}, { user: 'a' }, { user: 3, system: null }, { user: -1, system: 2 }, { user: 3, system: Infinity }]) {
  show(`cpuUsage(${JSON.stringify(v)})`, () => typeof process.cpuUsage(v));
}
for (const v of [{}, '123x', '999', 1.5, -1]) show(`umask(${JSON.stringify(v)})`, () => process.umask(v));
show('umask(0o22)', () => { const old = process.umask(0o22); return process.umask(old); });
for (const v of ['', 'two', 2.1, Infinity, 2n, true, {}]) show(`exitCode = ${String(v)}`, () => { process.exitCode = v; });
process.exitCode = undefined;
for (const args of [[1], ['w', 1], ['w', 'T', 1], ['w', { type: 'T', code: 'C', detail: 'D' }]]) {
  show(`emitWarning(${args.map(String).join(', ')})`, () => process.emitWarning(...args));
}

const sym = Symbol('s');
show('env[sym] = 1', () => { process.env[sym] = 1; });
show('env.X = sym', () => { process.env.X_SYM = sym; });
show('sym in env', () => sym in process.env);
process.env.X_NUM = 42;
show('env.X_NUM', () => process.env.X_NUM);
process.env.X_UNDEF = undefined;
show('env.X_UNDEF', () => process.env.X_UNDEF);
show('delete env.X_NUM', () => delete process.env.X_NUM && !('X_NUM' in process.env));
show('env.hasOwnProperty', () => process.env.hasOwnProperty === Object.prototype.hasOwnProperty);
show('defineProperty getter', () => Object.defineProperty(process.env, 'X_G', { get() { return 1; } }));
show('defineProperty not enumerable', () => Object.defineProperty(process.env, 'X_G', { value: 1 }));
show('defineProperty plain', () => { Object.defineProperty(process.env, 'X_D', { value: 7, writable: true, enumerable: true, configurable: true }); return process.env.X_D; });

// Timers the loop waits for, as getActiveResourcesInfo lists them.
const count = (type) => process.getActiveResourcesInfo().filter((t) => t === type).length;
const t = setTimeout(() => {
  console.log('in callback', count('Timeout'));
  clearTimeout(t);
  console.log('after clear', count('Timeout'));
  setImmediate(() => console.log('in immediate', count('Immediate')));
  console.log('immediates', count('Immediate'));
}, 1);
const u = setTimeout(() => {}, 1).unref();
console.log('timeouts', count('Timeout'), 'immediates', count('Immediate'));
void u;
process.on('warning', (w) => console.log('warning event', w.name, w.code, w.message, w.detail));
