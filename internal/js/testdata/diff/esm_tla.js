// ES modules with top-level await: evaluation order across modules,
// cycles, live bindings, dynamic import, require() of ES modules, import()
// from CommonJS and the uncaught output of a rejected top-level await.
// Each case is a small module graph written to a temporary directory and
// run as its own node process; output is compared with paths replaced.
const cp = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const cases = {
  order: {
    'main.mjs': `import './x.cjs';
import './t1.mjs';
import './y.mjs';
import './t2.mjs';
import './s.mjs';
console.log('main');`,
    'x.cjs': `console.log('x cjs');`,
    't1.mjs': `import './t1dep.mjs';
console.log('t1 start');
await null;
console.log('t1 mid');
await new Promise((r) => setTimeout(r, 5));
console.log('t1 end');`,
    't1dep.mjs': `console.log('t1dep');`,
    'y.mjs': `import './t1.mjs';
console.log('y after t1');`,
    't2.mjs': `console.log('t2 start');
await 0;
console.log('t2 end');`,
    's.mjs': `console.log('s sync');`,
  },
  entry: {
    'main.mjs': `import { v } from './dep.mjs';
import { s } from './sib.mjs';
console.log('main', v, s);
const m = await import('./dep.mjs');
console.log('dyn', m.v, m === await import('./dep.mjs'));
for await (const x of [Promise.resolve(1), 2]) console.log('for await', x);
setTimeout(() => console.log('timer after main'), 1);`,
    'dep.mjs': `console.log('dep start');
await new Promise((r) => setTimeout(r, 10));
console.log('dep end');
export const v = 42;`,
    'sib.mjs': `console.log('sib');
export const s = 1;`,
  },
  cycle: {
    'main.mjs': `import { a, fa } from './a.mjs';
console.log('main', a, fa());`,
    'a.mjs': `import { b } from './b.mjs';
console.log('a body', b);
export const a = 'A';
export function fa() { return 'fa'; }`,
    'b.mjs': `import { fa, a } from './a.mjs';
console.log('b body', fa());
try { console.log(a); } catch (e) { console.log('tdz', e.constructor.name); }
await 0;
export const b = 'B';`,
  },
  live: {
    'main.mjs': `import { count, inc } from './counter.mjs';
import * as ns from './counter.mjs';
import def, { named } from './c.cjs';
console.log(count); inc(); console.log(count, ns.count);
console.log(Object.keys(ns).sort().join(), Object.prototype.toString.call(ns));
console.log(def.named, named, typeof def);
const dyn = await import('./counter.mjs');
console.log(dyn === ns, dyn.count, dyn.default);
const c = await import('./c.cjs');
console.log(c.default === def, c.named);`,
    'counter.mjs': `export let count = 0;
export function inc() { count++; }
export default 'D';`,
    'c.cjs': `exports.named = 'N';`,
  },
  rejected: {
    'main.mjs': `import './bad.mjs';
console.log('never');`,
    'bad.mjs': `console.log('bad start');
await 1;
throw new TypeError('bad dep');`,
  },
  errors: {
    'main.mjs': `try { await import('./missing.mjs'); } catch (e) { console.log(e.code); }
try { await import('./thrower.mjs'); } catch (e) { console.log('caught', e.message); }
try { await import('./thrower.mjs'); } catch (e) { console.log('again', e.message); }
try { await import('nopkg'); } catch (e) { console.log(e.code); }
console.log((await import('node:path')).default.sep, typeof (await import('fs')).readFileSync);
console.log(import.meta.filename.endsWith('main.mjs'), typeof import.meta.dirname, import.meta.resolve('./thrower.mjs').startsWith('file:///'));`,
    'thrower.mjs': `console.log('thrower runs');
throw new Error('thrown at load');`,
  },
  require: {
    'main.cjs': `const m = require('./sync.mjs');
console.log(m.v, m.default, require('./sync.mjs') === m);
try { require('./tla.mjs'); } catch (e) { console.log(e.code); }
import('./tla.mjs').then(async (ns) => {
  console.log('dynamic', ns.t);
  console.log('from cjs', (await import('./c.cjs')).default.k);
});`,
    'sync.mjs': `import dep from './dep.cjs';
export const v = dep + 1;
export default 'def';`,
    'dep.cjs': `module.exports = 41;`,
    'tla.mjs': `console.log('tla ran');
export const t = await Promise.resolve('T');`,
    'c.cjs': `exports.k = 5;`,
  },
};

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'esm-tla-'));
for (const [name, files] of Object.entries(cases)) {
  const dir = path.join(root, name);
  fs.mkdirSync(dir);
  let main;
  for (const [file, text] of Object.entries(files)) {
    fs.writeFileSync(path.join(dir, file), `${text}\n`);
    if (file.startsWith('main.')) main = file;
  }
  const r = cp.spawnSync(process.execPath, [main], { cwd: dir, encoding: 'utf8' });
  const clean = (s) => s.split(dir).join('<dir>');
  console.log(`--- ${name}: status ${r.status}`);
  process.stdout.write(clean(r.stdout));
  // The uncaught report: source line, caret, error and first frame.
  if (r.status !== 0) console.log(clean(r.stderr).split('\n').slice(0, 6).join('\n'));
}

// Top-level await in evaluated module code.
const e = cp.spawnSync(process.execPath, ['--input-type=module', '-e', 'console.log(await Promise.resolve("eval tla"))'], { encoding: 'utf8' });
console.log('--- eval:', e.status, e.stdout.trim());
fs.rmSync(root, { recursive: true, force: true });
