const EventEmitter = require('events');
const util = require('util');
const e = new EventEmitter();
e.on('a', (x) => console.log('a1', x));
e.prependListener('a', (x) => console.log('a0', x));
e.once('b', () => console.log('b once'));
e.emit('a', 1); e.emit('b'); e.emit('b');
console.log(e.listenerCount('a'), e.eventNames());
try { e.emit('error', new Error('boom')); } catch (err) { console.log('caught', err.message); }
console.log(util.inspect({ a: { b: { c: { d: 1 } } }, arr: [1, 'two', [3]], s: 'str', n: null, u: undefined, f() {}, sym: Symbol('s') }));
console.log(util.inspect(new Map([['k', { v: 1 }]])), util.inspect(new Set(['x'])), util.inspect([1, , 3]), util.inspect('a\nb'));
console.log(util.inspect({ long: 'x'.repeat(100), nested: [[[[1]]]] }, { depth: 0 }), util.inspect(new Error('e').message));
console.log(util.format('%s %d %i %f %j %o %%', 'str', 42.5, 42.5, '1.5', { a: 1 }, [1]), util.format('a', 'b', 3));
class Foo { constructor() { this.x = 1; } }
console.log(util.inspect(new Foo()), util.inspect(Object.create(null)), util.inspect(new Date(0)), util.inspect(/re/g), util.inspect(123n));
console.log(util.types.isPromise(Promise.resolve()), util.types.isRegExp(/a/), util.isDeepStrictEqual({ a: [1] }, { a: [1] }));
util.promisify((cb) => cb(null, 'promisified'))().then(console.log);
console.log(util.inspect(new Uint8Array([1, 2])), util.inspect(Buffer.from('ab')), util.inspect([undefined, null]), util.inspect({ 'a-b': 1 }));
