// WHATWG URL and URLSearchParams: Node's argument checks, error codes,
// brand checks, property shapes and inspect output.
const util = require('util');
const show = (f) => {
  try { console.log('ok', util.inspect(f())); } catch (e) { console.log('throws', e.name, e.code, e.message, e.input, e.base); }
};
const sp = new URLSearchParams('?a=1&b=2&a=3&c=%20x+y');
show(() => sp.get.call(undefined, 'a'));
show(() => sp.get());
show(() => sp.append('a'));
show(() => sp.set());
show(() => sp.delete());
show(() => sp.has());
show(() => sp.getAll());
show(() => sp.forEach(1));
show(() => sp.entries().next.call({}));
show(() => sp[util.inspect.custom].call({}));
show(() => sp.get(Symbol('s')));
show(() => new URLSearchParams([[1]]));
show(() => new URLSearchParams([1]));
show(() => new URLSearchParams({ [Symbol.iterator]: 1 }));
show(() => new URLSearchParams(null).toString());
show(() => new URLSearchParams({ a: 1, b: [2, 3], '\uD800': 'x', '\uDC00': 'y' }).toString());
show(() => new URLSearchParams([['x', 'y'], new Set(['p', 'q'])]).toString());
show(() => new URLSearchParams(sp).toString());
show(() => [sp.get('a'), sp.getAll('a'), sp.has('a', '3'), sp.has('a', '4'), sp.size, sp.get('zz'), sp.get('c')]);
sp.delete('a', '1');
sp.set('b', 'two words');
sp.append('~', '\u00e9&=');
sp.sort();
console.log(sp.toString(), [...sp], [...sp.keys()], [...sp.values()], sp[Symbol.iterator] === sp.entries);
console.log(util.inspect(sp), util.inspect(sp, { breakLength: 1 }), util.inspect(sp.values()), util.inspect({ sp }, { depth: -1 }));
const it = sp.entries();
it.next();
console.log(util.inspect(it), Object.prototype.toString.call(it), Object.prototype.toString.call(sp));
const seen = [];
sp.forEach(function (v, k, p) { seen.push([k, v, p === sp, this]); if (k === '~') sp.append('late', '1'); }, 'self');
console.log(seen.length, seen[0]);

const u = new URL('https://user:pw@example.com:8080/p/a?x=1&y=2#frag');
const params = u.searchParams;
params.append('z', 'a b');
console.log(u.href, u.search);
u.search = '?q=new';
console.log(params.get('q'), params.size, u.searchParams === params);
u.href = 'http://other/?k=v';
console.log(params.toString(), u.origin);
params.delete('k');
console.log(u.href, JSON.stringify(u), String(u));
console.log(Object.getOwnPropertySymbols(u).length, Object.keys(u).length, Object.getOwnPropertySymbols(params).length);
show(() => new URL());
show(() => new URL('nope'));
show(() => new URL('x', 'nope'));
show(() => { u.href = 'bad'; });
show(() => URL.canParse());
show(() => [URL.canParse('http://a'), URL.canParse('a', 'http://b'), URL.canParse('a')]);
show(() => URL.revokeObjectURL());
show(() => URL.createObjectURL('x'));
for (const m of ['toString', 'toJSON']) show(() => Reflect.apply(URL.prototype[m], {}, []));
for (const p of ['href', 'search', 'protocol', 'origin', 'searchParams']) show(() => Reflect.get(URL.prototype, p, {}));
for (const p of ['href', 'protocol', 'hash']) show(() => Reflect.set(URL.prototype, p, 'x', {}));
const desc = (o, k) => { const d = Object.getOwnPropertyDescriptor(o, k); return d && [typeof d.get, typeof d.set, typeof d.value, d.enumerable, d.configurable, d.writable]; };
for (const k of ['href', 'origin', 'searchParams', 'toString', 'toJSON', Symbol.toStringTag]) console.log(String(k), desc(URL.prototype, k));
for (const k of ['size', 'append', 'sort', Symbol.iterator, Symbol.toStringTag]) console.log(String(k), desc(URLSearchParams.prototype, k));
for (const k of ['canParse', 'createObjectURL', 'revokeObjectURL']) console.log(k, desc(URL, k));
console.log(URL.length, URLSearchParams.length, Object.getOwnPropertyNames(Object.getPrototypeOf(sp.keys())));
class MyURL extends URL {}
console.log(util.inspect(new MyURL('http://h/p?a=b')), util.inspect({ a: u }, { depth: 0 }));
console.log(require('url').URL === URL, require('url').URLSearchParams === URLSearchParams);
