const test = require('node:test');
test('leaks', () => { setTimeout(() => { throw new Error('late'); }, 5); });
test('leaks rejection', () => { setTimeout(() => { Promise.reject(new Error('late rej')); }, 10); });
test('slow', () => new Promise((r) => setTimeout(r, 30)));
