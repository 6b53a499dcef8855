// console.log and console.error format primitives without loading util;
// the output must be util.format's, for every kind of primitive.
const values = ['s', '', 'with space', 'per%cent', '%s', '%%', 0, -0, 1.5, -2, NaN, Infinity, -Infinity, 1e21, 2n, -3n, 0n,
  true, false, null, undefined];
console.log();
for (const a of values) {
  console.log(a);
  for (const b of values) console.log(a, b);
}
console.log('%s=%d', 'x', 42, 'extra', -0);
console.log('a', Symbol('sym'), { o: 1 }, [1], () => {});
console.log(-0, '-0', [-0]);
console.error('to stderr', 1, null);
process.stdout.write('done\n');
