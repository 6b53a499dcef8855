const test = require('node:test');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
test('parent', async (t) => {
  console.log('parent start');
  await t.test('a', async () => { await sleep(10); console.log('in a'); });
  console.log('between');
  await t.test('b', async () => { await sleep(10); console.log('in b'); });
  console.log('parent end');
});
test('next', async () => { await sleep(10); console.log('in next'); });
