'use strict';
// querystring.escape/unescape, timers' Symbol.dispose and console.clear
// against Node 22.
const qs = require('querystring');
const show = (f) => { try { console.log('ok', JSON.stringify(f())); } catch (e) { console.log(e.name, e.code, e.message); } };
show(() => [qs.escape(5), qs.escape({}), qs.escape([5, 10]), qs.escape('Ŋōđĕ a~*\'()!')]);
show(() => qs.escape(`${String.fromCharCode(0xD801)}test`));
show(() => qs.escape(String.fromCharCode(0xD801)));
show(() => qs.escape({ toString: 5, valueOf: () => 'v' }));
show(() => qs.escape(Symbol('s')));
show(() => [qs.unescape('%E4%zz%41+x'), qs.unescape('a%20b%'), qs.unescape('%C5%8A')]);

const t = setTimeout(() => console.log('timeout ran'), 1);
const i = setInterval(() => console.log('interval ran'), 1);
const im = setImmediate(() => console.log('immediate ran'));
t[Symbol.dispose]();
i[Symbol.dispose]();
im[Symbol.dispose]();
console.log(t._destroyed, i._destroyed, im._destroyed);

let out = '';
const write = process.stdout.write;
process.stdout.write = (s) => { out += s; return true; };
process.stdout.isTTY = false;
console.clear();
process.stdout.isTTY = true;
console.clear();
process.stdout.write = write;
console.log(JSON.stringify(out));

// A replaced process.stdout.write receives the console's output.
let captured = '';
process.stdout.write = (s) => { captured += s; return true; };
console.log('to the hook %d', 1);
console.count();
delete process.stdout.write;
console.log(JSON.stringify(captured));
