'use strict';
// stream/consumers: read a whole stream (Node stream, web stream or any
// async iterable) as a Blob, ArrayBuffer, Buffer, string or JSON value.

async function blob(stream) {
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  return new Blob(chunks);
}

async function arrayBuffer(stream) {
  return (await blob(stream)).arrayBuffer();
}

async function buffer(stream) {
  return require('../buffer.js').Buffer.from(await arrayBuffer(stream));
}

async function text(stream) {
  const dec = new TextDecoder();
  let str = '';
  for await (const chunk of stream) {
    if (typeof chunk === 'string') str += chunk;
    else str += dec.decode(chunk, { stream: true });
  }
  // The decoder's last bytes, if a chunk ended inside a character.
  str += dec.decode(undefined, { stream: false });
  return str;
}

async function json(stream) {
  return JSON.parse(await text(stream));
}

module.exports = { arrayBuffer, blob, buffer, text, json };
