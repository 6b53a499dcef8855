'use strict';
// The Go bridge and the scratch buffer that carries bytes across it.
//
// Go sets globalThis.__secexec_bridge before this script runs; it is
// captured here and deleted, so guest code never sees it. Bytes travel
// through one SharedArrayBuffer that only this closure and the Go side
// hold: Go reads and writes it in place (v8go exposes the backing store of
// a SharedArrayBuffer, not of an ArrayBuffer), so a transfer costs one
// memcpy on the JS side. Guest code never gets a view of it: every result
// is copied out into a fresh buffer.
const B = globalThis.__secexec_bridge;
delete globalThis.__secexec_bridge;

const P = require('./primordials.js');

const SCRATCH = 256 * 1024;
const sab = new P.SharedArrayBuffer(SCRATCH);
const scratch = new P.Uint8Array(sab);
const scratchF64 = new P.Float64Array(sab, 0, 32);
B.setScratch(sab);

// Views of the scratch buffer are made with the captured constructor,
// never with subarray or slice: those create their result through the
// receiver's constructor[Symbol.species], which guest code can replace,
// and would hand it the SharedArrayBuffer (TestPrimordialsHoldUnderSpies,
// the species cases of TestSecurity).
function scratchView(n) { return new P.Uint8Array(sab, 0, n); }

// toScratch copies u8[off, off+n) to the scratch buffer. The source view
// is built from the captured buffer and offset getters, so a guest's
// species or getters decide nothing here either.
function toScratch(u8, off, n) {
  const src = new P.Uint8Array(P.TypedArrayPrototypeGetBuffer(u8), P.TypedArrayPrototypeGetByteOffset(u8) + off, n);
  P.TypedArrayPrototypeSet(scratch, src, 0);
}

// fromScratch copies scratch[0, n) into into at at, or into a new
// Uint8Array.
function fromScratch(n, into, at) {
  const out = into || new P.Uint8Array(n);
  P.TypedArrayPrototypeSet(out, scratchView(n), into ? at || 0 : 0);
  return out;
}

// takeBytes turns a byte result of the bridge into a Uint8Array: n >= 0
// bytes in the scratch buffer, or a blob (-id) held in Go for results
// larger than the scratch buffer.
function takeBytes(n, alloc) {
  if (n >= 0) {
    const out = alloc ? alloc(n) : new P.Uint8Array(n);
    return fromScratch(n, out, 0);
  }
  const id = -n;
  const size = B.blobSize(id);
  const out = alloc ? alloc(size) : new P.Uint8Array(size);
  let off = 0;
  try {
    while (off < size) {
      const k = B.blobRead(id, off);
      fromScratch(k, out, off);
      off += k;
    }
  } finally {
    B.blobFree(id);
  }
  return out;
}

// giveBytes passes u8 to the bridge: the byte count when it fits the
// scratch buffer, else -id of a blob built from chunks.
function giveBytes(u8) {
  const n = u8.byteLength;
  if (n <= SCRATCH) {
    toScratch(u8, 0, n);
    return n;
  }
  const id = B.blobNew(n);
  let off = 0;
  while (off < n) {
    const k = P.MathMin(SCRATCH, n - off);
    toScratch(u8, off, k);
    B.blobAppend(id, k);
    off += k;
  }
  return -id;
}

function asU8(data) {
  if (data instanceof P.Uint8Array) return data;
  if (P.ArrayBufferIsView(data)) return new P.Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  if (data instanceof P.ArrayBuffer) return new P.Uint8Array(data);
  throw new P.TypeError('expected bytes');
}

module.exports = { B, SCRATCH, scratch, scratchF64, toScratch, fromScratch, takeBytes, giveBytes, asU8 };
