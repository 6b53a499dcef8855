const test = require('node:test');
test('resolves later', async () => { await new Promise((r) => setTimeout(r, 5)); });
test('rejects', () => Promise.reject(new Error('rejected')));
test('callback done', (t, done) => { setTimeout(done, 1); });
test('callback error', (t, done) => { setTimeout(() => done(new Error('via done')), 1); });
test('uncaught in a timer', () => new Promise((resolve) => {
  setTimeout(() => { throw new Error('from a timer'); }, 1);
  setTimeout(resolve, 20);
}));
test('unawaited subtest', (t) => {
  t.test('slow child', async () => { await new Promise((r) => setTimeout(r, 20)); });
});
test('timeout', { timeout: 10 }, async () => { await new Promise((r) => setTimeout(r, 200)); });
