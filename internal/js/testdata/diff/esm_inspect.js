// A module namespace prints with its values, as Node prints it.
const fs = require('fs');
const path = require('path');
const dir = fs.mkdtempSync(path.join(require('os').tmpdir(), 'nsi-'));
fs.writeFileSync(path.join(dir, 'm.mjs'), 'export const x = 41; export default "d"; export function f() {}\nexport let later = 1;\n');
import(path.join(dir, 'm.mjs')).then((ns) => {
  console.log(ns);
  console.log(require('util').inspect(ns, { depth: 0 }));
  console.log('%o', ns.x);
  console.log(Object.keys(ns), Object.prototype.toString.call(ns));
});
