// node -e / -p: builtin modules are globals (lazy, not enumerable,
// replaced by a plain property when assigned); not so for a file or stdin.
const { execFileSync } = require('child_process');
const run = (args, input) => execFileSync(process.execPath, args, { encoding: 'utf8', input });
console.log(run(['-e', "const d = Object.getOwnPropertyDescriptor(globalThis, 'fs'); console.log(typeof url, typeof d.get, d.enumerable, typeof fs.readFileSync, path.join('a', 'b'))"]));
console.log(run(['-p', "typeof zlib + ' ' + typeof string_decoder.StringDecoder"]));
console.log(run(['-e', "url = 5; const d = Object.getOwnPropertyDescriptor(globalThis, 'url'); console.log(url, d.enumerable, d.writable)"]));
console.log(run(['-e', "const os = 1; console.log(os)"]));
console.log(run(['--input-type=module', '-e', 'console.log(typeof util.inspect)']));
console.log(run(['-'], 'console.log(typeof url)'));
console.log(typeof globalThis.url);
