'use strict';
// vm's argument checks, as Node's: contexts are the objects createContext
// made, Script and run options are type- and range-checked.
const vm = require('vm');
const show = (f) => {
  try { const r = f(); return typeof r === 'object' ? 'object' : String(r); } catch (e) { return `${e.name} ${e.code}`; }
};
const ctx = { a: 1 };
const cases = [
  () => vm.isContext({}), () => vm.isContext([]), () => vm.isContext(vm.createContext()),
  () => vm.isContext(vm.createContext(ctx)), () => vm.isContext(ctx), () => vm.createContext(ctx) === ctx,
  () => vm.isContext('s'), () => vm.isContext(null), () => vm.isContext(), () => vm.isContext(() => {}),
  () => vm.createContext('s'), () => vm.createContext([1]) && 'ok', () => vm.createContext({}, null),
  () => vm.runInContext('a + 1', ctx), () => vm.runInContext('1', {}), () => vm.runInContext('1', ctx, 'file.js'),
  () => vm.runInNewContext('b = 2; b', {}), () => vm.runInNewContext('1', null), () => vm.runInNewContext('1'),
  () => new vm.Script('1', 42), () => new vm.Script('1', null), () => new vm.Script('1', 'name.js').runInThisContext(),
  () => new vm.Script('1', { lineOffset: '1' }), () => new vm.Script('1', { lineOffset: 0.5 }),
  () => new vm.Script('1', { columnOffset: 2 ** 32 }), () => new vm.Script('1', { filename: 1 }),
  () => new vm.Script('1', { produceCachedData: 1 }), () => new vm.Script('1', { cachedData: [0] }),
  () => new vm.Script('1', { cachedData: Buffer.alloc(0) }) && 'ok',
];
const s = new vm.Script('7');
for (const o of [null, 'bad', { timeout: 'x' }, { timeout: 0 }, { timeout: NaN }, { timeout: 60000 }, { displayErrors: 1 },
  { breakOnSigint: null }, {}]) {
  cases.push(() => s.runInThisContext(o), () => s.runInContext(ctx, o), () => s.runInNewContext({}, o));
}
cases.push(() => s.runInContext({}));
for (const c of cases) console.log(show(c));
