'use strict';
// repl.start with the program's own eval and writer, lines typed with
// r.write, a dot-command of its own, Recoverable for an entry that needs
// more lines, ignoreUndefined and an unknown keyword.
const repl = require('repl');
const { PassThrough } = require('stream');

const input = new PassThrough();
const output = new PassThrough();
let out = '';
output.on('data', (d) => { out += d; });
const seen = [];
const r = repl.start({
  input, output, prompt: '$ ', terminal: false, ignoreUndefined: true,
  eval(cmd, context, file, cb) {
    seen.push([cmd, context === r.context, typeof file]);
    if (cmd.trim() === 'open(') return cb(new repl.Recoverable(new SyntaxError('more')));
    if (cmd.includes('boom')) return cb(new Error('boom'));
    if (cmd.trim() === 'nothing') return cb(null, undefined);
    cb(null, { got: cmd.trim().split('\n') });
  },
  writer: (v) => `<${JSON.stringify(v)}>`,
});
r.defineCommand('twice', {
  help: 'doubles',
  action(arg) { this.output.write(`${arg}${arg}\n`); this.displayPrompt(); },
});
r.defineCommand('bare', function() { this.output.write('bare ran\n'); this.displayPrompt(); });
r.write('one\n');
r.write('\n');
r.write('open(\n');
r.write('close)\n');
r.write('nothing\n');
r.write('.twice ab\n');
r.write('.bare\n');
r.write('.nosuch\n');
r.write('boom\n');
input.write('from input\n');
r.write('.exit\n');
console.log(JSON.stringify(out));
console.log(JSON.stringify(seen));
console.log(typeof r.commands.help.action, typeof r.commands.twice.action, r.commands.twice.help);
console.log(Object.keys(repl.writer.options).includes('showProxy'));
