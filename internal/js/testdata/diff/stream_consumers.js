// stream/consumers over Node streams, web streams and async iterables,
// and Blob parts that are neither bytes nor Blobs (their strings).
const { arrayBuffer, blob, buffer, text, json } = require('stream/consumers');
const { Readable, PassThrough } = require('stream');
(async () => {
  const euro = Buffer.from('a€b');
  // A multi-byte character split across chunks.
  console.log(await text(Readable.from([euro.subarray(0, 2), euro.subarray(2)])));
  console.log(await json(Readable.from(['{"a":', '[1,2]}'])));
  console.log((await buffer(Readable.from([Buffer.from('xy'), Buffer.from('z')]))).toString('hex'));
  console.log((await arrayBuffer(Readable.from([Buffer.from('abc')]))).byteLength);
  const b = await blob(new PassThrough({ objectMode: true }).end({}));
  console.log(b.size, await b.text());
  const web = new ReadableStream({ start(c) { c.enqueue(new TextEncoder().encode('web ')); c.enqueue(new TextEncoder().encode('stream')); c.close(); } });
  console.log(await text(web));
  console.log(await text((async function* () { yield 'gen'; yield Buffer.from('erator'); })()));
  console.log(new Blob([{}, 'a', new Uint8Array([65]), new ArrayBuffer(1), 5, null]).size);
  await json(Readable.from(['{bad'])).catch((e) => console.log(e.name));
})();
