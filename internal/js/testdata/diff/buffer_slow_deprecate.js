'use strict';
// buffer.SlowBuffer checks its size as Node does; util.deprecate's code
// must be a string (kMaxLength, in range messages, differs by build).
const { SlowBuffer } = require('buffer');
const util = require('util');
const show = (f) => {
  try { const r = f(); return r instanceof Buffer ? `Buffer ${r.length} ${r.buffer.byteLength >= r.length}` : typeof r; } catch (e) { return `${e.name} ${e.code}${e.code === "ERR_OUT_OF_RANGE" ? "" : ` ${e.message}`}`; }
};
for (const v of [4, 0, undefined, {}, '6', true, NaN, Infinity, -1, 2 ** 53]) console.log(show(() => SlowBuffer(v)));
console.log(show(() => new SlowBuffer(2)));
for (const code of [1, true, null, {}, 'DEP0', undefined]) console.log(show(() => util.deprecate(() => {}, 'message', code)));
