// assert: CallTracker, and Node's messages for argument errors
// (ERR_INVALID_ARG_TYPE lists, ERR_INVALID_ARG_VALUE, ERR_OUT_OF_RANGE,
// ERR_INVALID_RETURN_VALUE), also where other modules raise them.
const assert = require('assert');
const show = (f) => {
  try { console.log('ok', f()); } catch (e) { console.log('throws', e.name, e.code, e.message); }
};
const tracker = new assert.CallTracker();
function foo() { return 1; }
const t1 = tracker.calls(foo, 2);
const t2 = tracker.calls();
t1(1, 2);
t1.call('self', 3);
console.log(tracker.getCalls(t1), Object.isFrozen(tracker.getCalls(t1)), t1.length, t2.name);
console.log(tracker.report().map((r) => [r.message, r.actual, r.expected, r.operator]));
show(() => tracker.verify());
show(() => tracker.calls(foo, '1'));
show(() => tracker.calls(foo, 0.5));
show(() => tracker.calls(foo, 0));
show(() => tracker.calls(foo, 2 ** 33));
show(() => tracker.getCalls(foo));
show(() => tracker.getCalls({}));
tracker.reset(t1);
t1(); t1(); t2();
show(() => tracker.verify());
const t3 = tracker.calls(foo, 1);
const t4 = tracker.calls(foo, 1);
show(() => tracker.verify());
try { tracker.verify(); } catch (e) { console.log(Object.keys(e), e['message 0'], e['operator 1'], e.actual, e.generatedMessage); }
void t3; void t4;
show(() => assert.throws(() => {}, 5));
show(() => assert.throws(() => {}, 'same', 'same'));
show(() => assert.throws(() => { throw new Error('same'); }, 'same'));
assert.rejects(() => {}).catch((e) => console.log('rejects', e.code, e.message));
assert.rejects(() => 5).catch((e) => console.log('rejects', e.code, e.message));
assert.doesNotReject(1).catch((e) => console.log('doesNotReject', e.code, e.message));
show(() => require('fs').readFileSync('a\0b'));
show(() => require('fs').openSync('/x', 'zz'));
show(() => require('crypto').randomBytes(-1));
show(() => require('crypto').randomBytes(2 ** 40));
show(() => require('crypto').randomInt(10, 5));
show(() => require('crypto').pbkdf2Sync('a', 'b', 1, 10n, 'sha1'));
for (const v of [null, undefined, 5, -0, NaN, 5n, true, Symbol('s'), 'x'.repeat(40), "it's", () => {}, function named() {}, {}, [], Object.create(null), new Map()]) {
  show(() => new URLSearchParams('a=b').forEach(v));
}
