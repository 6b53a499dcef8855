'use strict';
// The errors node:test and its mocks throw for bad arguments, worded as
// Node's ERR_INVALID_ARG_TYPE and friends are.

function typeError(code, msg) {
  const e = new TypeError(msg);
  e.code = code;
  return e;
}

// received describes a wrong argument as Node's messages do.
function received(v) {
  if (v === null || v === undefined) return String(v);
  if (typeof v === 'function') return `function ${v.name}`;
  if (typeof v === 'object') return v.constructor && v.constructor.name ? `an instance of ${v.constructor.name}` : require('node:util').inspect(v, { depth: -1 });
  let shown = require('node:util').inspect(v);
  if (shown.length > 28) shown = `${shown.slice(0, 25)}...`;
  return `type ${typeof v} (${shown})`;
}

module.exports = { typeError, received };
