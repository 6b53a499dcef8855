// import.meta's fields (dirname, filename, resolve) and JSON modules
// imported with their type attribute, also by import() in code compiled
// at run time.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

console.log(Object.keys(import.meta).sort().join());
console.log(import.meta.filename === fileURLToPath(import.meta.url), import.meta.dirname === path.dirname(fileURLToPath(import.meta.url)));
console.log(import.meta.resolve('./data.json') === new URL('./data.json', import.meta.url).href);
console.log(import.meta.resolve('./missing.js') === pathToFileURL(path.join(import.meta.dirname, 'missing.js')).href);
console.log(import.meta.resolve('node:fs'), import.meta.resolve('fs'), import.meta.resolve('file:///x/y.js'));
try {
  import.meta.resolve('no-such-package-anywhere');
} catch (e) {
  console.log(e.name, e.code);
}

const file = path.join(import.meta.dirname, 'data.json');
fs.writeFileSync(file, '{"a":[1,2],"b":{"c":"d"}}');
const a = await import('./data.json', { with: { type: 'json' } });
const b = await import(pathToFileURL(file).href, { with: { type: 'json' } });
console.log(JSON.stringify(a.default), a.default === b.default, Object.keys(a).join());
const viaFunction = await new Function('return import("./data.json", { with: { type: "json" } })')();
const viaEval = await (0, eval)('import("./data.json", { with: { type: "json" } })');
console.log(viaFunction.default === a.default, viaEval.default === a.default);
