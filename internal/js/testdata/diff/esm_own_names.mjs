// An ES module has no __filename, __dirname, require, module or exports
// of its own, and declaring them is how ESM code gets them (yargs, mocha,
// vite): the declarations must not clash with the runtime's wrapper.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

for (const name of ['__filename', '__dirname', 'require', 'module', 'exports']) {
  try {
    // Indirect eval sees only the global scope.
    console.log(name, typeof (0, eval)(name));
  } catch (e) {
    console.log(name, e.name);
  }
}

const __filename = fileURLToPath(import.meta.url);
const __dirname = path.dirname(__filename);
const require = createRequire(import.meta.url);
const module = { id: 'mine' };
const exports = { mine: true };
console.log(path.basename(__filename), __dirname === path.dirname(fileURLToPath(import.meta.url)));
console.log(typeof require('node:os').platform, module.id, exports.mine);
export default __dirname;
