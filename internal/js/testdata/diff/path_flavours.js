'use strict';
// path.posix and path.win32 on generated paths: separators of both
// kinds, drive roots, UNC roots, dots, suffixes. Drive letters only lead
// a path: Node's later releases treat a colon inside a win32 path
// differently from 22.12, the control, so only the first argument has one.
const path = require('path');
process.chdir('/');
let seed = 7;
const rnd = (n) => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed % n; };
const atoms = ['a', 'b', '.', '..', '/', '\\', '//', '\\\\', 'x.y', '.z', 'srv', 'foo.', '...', 'a.b.c', ''];
const roots = ['', '', '', 'C:', 'c:', 'D:\\', '\\\\srv\\sh', '//srv/', '/', '\\'];
const gen = (drive) => {
  let s = roots[rnd(roots.length)];
  if (!drive) s = s.replace(/^[a-zA-Z]:/, '');
  for (let n = rnd(6); n > 0; n--) s += atoms[rnd(atoms.length)];
  // \\.\ and \\?\ are device roots to later releases, not UNC.
  return /^[\\/]{2,}[.?]/.test(s) ? gen(drive) : s;
};
const lines = [];
for (let k = 0; k < 1500; k++) {
  const a = gen(true);
  const b = gen(false);
  const c = gen(false);
  for (const ns of ['posix', 'win32']) {
    const p = path[ns];
    const r = {};
    const calls = {
      normalize: () => p.normalize(a), dirname: () => p.dirname(a), basename: () => p.basename(a),
      basenameSuffix: () => p.basename(a, b.slice(-2)), extname: () => p.extname(a), parse: () => p.parse(a),
      isAbsolute: () => p.isAbsolute(a), join: () => p.join(a, b, c), resolve: () => p.resolve(a, b),
      relative: () => p.relative(a, b), toNamespacedPath: () => p.toNamespacedPath(a),
      format: () => p.format(p.parse(a)),
    };
    for (const [name, fn] of Object.entries(calls)) {
      try { r[name] = fn(); } catch (e) { r[name] = `throws ${e.code}`; }
    }
    lines.push(JSON.stringify([ns, a, b, c, r]));
  }
}
for (const [ns, pathStr, glob] of [
  ['posix', 'foo/bar/baz', 'foo/{bar,car}/*'], ['posix', 'foo/.bar/baz', 'foo/*/baz'], ['posix', 'a/b/c/d', 'a/**/d'],
  ['posix', 'a/.b/c', 'a/**/c'], ['posix', 'abc', 'a?c'], ['posix', 'a', '[!b]'], ['win32', 'foo\\bar', 'foo/*'],
  ['win32', 'foo\\bar\\baz', 'foo\\**'], ['posix', 'x.js', '*.{js,ts}'], ['posix', 'x.md', '*.{js,ts}'],
]) lines.push(`${ns} ${pathStr} ${glob} ${path[ns].matchesGlob(pathStr, glob)}`);
console.log(lines.join('\n'));
