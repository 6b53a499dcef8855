'use strict';
// repl.start(prompt, stream) in node's older positional form; a 'line'
// emitted on the server is an entry (null too); an error thrown inside
// domain.run goes to that domain's listener, with no result and no prompt.
const repl = require('repl');
const { Stream } = require('stream');
const stream = new Stream();
stream.readable = stream.writable = true;
stream.resume = stream.pause = () => {};
let out = '';
stream.write = (d) => { out += d; };
const r = repl.start('% ', stream);
r.emit('line', '40 + 2');
r.emit('line', null);
stream.emit('data', '"from data"\n');
r.emit('line', 'require("domain").create().on("error", (e) => { process.stdout.write("domain got " + e.message + "\\n") }).run(() => { throw new Error("threw") })');
process.stdout.write(JSON.stringify(out) + '\n');
r.close();
