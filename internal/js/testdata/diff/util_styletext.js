// util.styleText colours only for a colour terminal unless told not to
// validate the stream (eslint's report piped to a file stays plain);
// FORCE_COLOR decides when set.
const util = require('node:util');
const { PassThrough } = require('node:stream');
const show = (v) => process.stdout.write(JSON.stringify(v) + '\n');
show(util.styleText('red', 'x'));
// (Not an array of formats with the stream validated: Node before 22.15
// coloured it anyway, a bug this runtime does not copy.)
show(util.styleText(['bold', 'red'], 'x', { validateStream: false }));
const term = new PassThrough();
term.isTTY = true;
term.getColorDepth = () => 8;
show(util.styleText('green', 'y', { stream: term }));
term.getColorDepth = () => 1;
show(util.styleText('green', 'y', { stream: term }));
show(util.styleText('green', 'y', { stream: new PassThrough() }));
for (const [v, want] of [['0', 'plain'], ['1', 'colour'], ['3', 'colour']]) {
  process.env.FORCE_COLOR = v;
  show([v, want, util.styleText('blue', 'z')]);
}
delete process.env.FORCE_COLOR;
for (const args of [[1, 'x'], ['nope', 'x'], ['toString', 'x'], ['red', 1], ['red', 'x', { validateStream: 1 }], ['red', 'x', { stream: {} }]]) {
  try {
    util.styleText(...args);
    show('no error');
  } catch (e) {
    show([e.name, e.code]);
  }
}
