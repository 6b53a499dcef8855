const test = require('node:test');
test('never ends', () => new Promise(() => { setInterval(() => {}, 1000); }));
