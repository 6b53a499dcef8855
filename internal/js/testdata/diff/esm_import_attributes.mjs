// Import attributes: a JSON module needs `with { type: 'json' }` (static
// imports, re-exports, import() from ES modules and CommonJS), other
// types and non-JSON modules with type json are refused. Node 20 names
// the codes ERR_IMPORT_ASSERTION_*; they are mapped to Node 22's names,
// which secexec follows (its messages are checked in esm_attributes_test.go).
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';
const dir = mkdtempSync(join(tmpdir(), 'attrs-'));
const files = {
  'x.json': '{"a":1,"b":[2]}',
  'y.json': '[3]',
  'm.mjs': 'export default "m"',
  'c.cjs': 'module.exports = "c"',
  'ok.mjs': "import a from './x.json' with { type: 'json' };\nimport * as ns from './x.json' with { type: \"json\" };\nexport default [a, Object.keys(ns)];",
  'reexport.mjs': "export { default } from './x.json' with { type: 'json' };",
  'missing.mjs': "import a from './x.json';\nexport default a;",
  'css.mjs': "import a from './x.json' with { type: 'css' };\nexport default a;",
  'wrongjs.mjs': "import a from './m.mjs' with { type: 'json' };\nexport default a;",
  'wrongcjs.mjs': "import a from './c.cjs' with { type: 'json' };\nexport default a;",
  'builtin.mjs': "import a from 'node:fs' with { type: 'json' };\nexport default a;",
  'other.mjs': "import a from './m.mjs' with { type: 'webassembly' };\nexport default a;",
  'dyn.mjs': "export default [await import('./x.json', { with: { type: 'json' } }), await import('./y.json').catch((e) => e.name), await import('./x.json', { with: { type: 'css' } }).catch((e) => e.name)];",
  'dyncjs.cjs': "module.exports = Promise.all([import('./x.json', { with: { type: 'json' } }), import('./y.json').catch((e) => e.name)]);",
  'req.mjs': "import { createRequire } from 'node:module';\nexport default createRequire(import.meta.url)('./x.json');",
};
for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
const v22 = { ERR_IMPORT_ASSERTION_TYPE_MISSING: 'ERR_IMPORT_ATTRIBUTE_MISSING', ERR_IMPORT_ASSERTION_TYPE_UNSUPPORTED: 'ERR_IMPORT_ATTRIBUTE_UNSUPPORTED', ERR_IMPORT_ASSERTION_TYPE_FAILED: 'ERR_IMPORT_ATTRIBUTE_TYPE_INCOMPATIBLE' };
const show = (v) => JSON.stringify(v, (k, x) => (x && x[Symbol.toStringTag] === 'Module' ? { ns: { ...x } } : x));
for (const name of ['ok.mjs', 'reexport.mjs', 'missing.mjs', 'css.mjs', 'wrongjs.mjs', 'wrongcjs.mjs', 'builtin.mjs', 'other.mjs', 'dyn.mjs', 'req.mjs']) {
  try {
    console.log(name, show((await import(pathToFileURL(join(dir, name)).href)).default));
  } catch (e) {
    console.log(name, e.name, v22[e.code] || e.code);
  }
}
console.log('dyncjs.cjs', show(await createRequire(import.meta.url)(join(dir, 'dyncjs.cjs'))));
// The namespace of a JSON module has only its default export.
const ns = await import(pathToFileURL(join(dir, 'x.json')).href, { with: { type: 'json' } });
console.log(Object.keys(ns), ns.default.b);
// A computed specifier with its attributes, and import() in eval.
const spec = pathToFileURL(join(dir, 'x' + '.json')).href;
console.log((await import(spec, { with: { type: 'json' } })).default.a, (await eval("import('node:path')")).sep);
