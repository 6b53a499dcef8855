'use strict';
// The default warning output comes before the program's 'warning'
// listeners and goes through a replaced process.stderr.write.
const EventEmitter = require('events');
const order = [];
process.stderr.write = (s) => { order.push(`stderr: ${s.split('\n')[0].replace(/^\(node:\d+\) /, '')}`); return true; };
process.on('warning', (w) => {
  order.push(`listener: ${w.name}`);
  delete process.stderr.write;
  console.log(order.join('\n'));
});
const e = new EventEmitter();
e.setMaxListeners(1);
e.on('x', () => {});
e.on('x', () => {});
