'use strict';
// MessageChannel, MessagePort and BroadcastChannel in one thread.
const { MessageChannel, receiveMessageOnPort, markAsUncloneable, markAsUntransferable } = require('worker_threads');
const { port1, port2 } = new MessageChannel();
port1.postMessage({ n: 1 });
port1.postMessage({ n: 2 });
console.log('sync', JSON.stringify(receiveMessageOnPort(port2)), receiveMessageOnPort(port2).message.n, receiveMessageOnPort(port2));
console.log('hasRef', port2.hasRef());
const ab = new ArrayBuffer(8);
new Uint8Array(ab)[0] = 42;
const order = [];
port2.on('message', (m) => {
  order.push(m);
  if (m === 'last') {
    console.log('order', JSON.stringify(order.slice(1)));
    port2.close();
  }
});
console.log('hasRef', port2.hasRef());
port1.on('message', () => {});
port1.on('close', () => console.log('close port1'));
port2.on('close', () => console.log('close port2'));
port1.postMessage(new Uint8Array(ab), [ab]);
console.log('detached', ab.byteLength);
for (let i = 0; i < 5; i++) port1.postMessage(i);
port1.postMessage('last');
const tries = [[() => {}], [Symbol('s')], [1, [port1]], [{ p: port2 }], [1, [new ArrayBuffer(1), 5]]];
for (const [v, tl] of tries) {
  try { port1.postMessage(v, tl); } catch (e) { console.log(e.name, e.code, e.message); }
}
const o = {};
markAsUncloneable(o);
try { port1.postMessage({ o }); } catch (e) { console.log(e.name, e.message); }
const u = new ArrayBuffer(4);
markAsUntransferable(u);
try { port1.postMessage(u, [u]); } catch (e) { console.log(e.name, e.message); }
const c = new MessageChannel();
c.port2.onmessage = (e) => { console.log('onmessage', Object.keys(e.data), e.constructor.name); c.port2.close(); };
c.port1.postMessage({ d: new Date(0), r: /x/g, e: new RangeError('r'), m: new Map([[1, new Set([2])]]) });
c.port2.addEventListener('message', (e) => console.log('event', e.data.d.toISOString(), e.data.r.flags, e.data.e instanceof RangeError, e.data.e.message, e.data.m.get(1).has(2)));
console.log(typeof MessageChannel, typeof MessagePort, typeof BroadcastChannel);
