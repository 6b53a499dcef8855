'use strict';
// Node's argument validators (lib/internal/validators.js): the same checks
// in the same order, so a bad argument gets the error code and message a
// program written for Node expects.
const { codedError } = require('./errors.js');

function validateInteger(value, name, min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER) {
  if (typeof value !== 'number') throw codedError('ERR_INVALID_ARG_TYPE', name, 'of type number', value);
  if (!Number.isInteger(value)) throw codedError('ERR_OUT_OF_RANGE', name, 'an integer', value);
  if (value < min || value > max) throw codedError('ERR_OUT_OF_RANGE', name, `>= ${min} && <= ${max}`, value);
}

function validateInt32(value, name, min = -2147483648, max = 2147483647) {
  validateInteger(value, name, min, max);
}

function validateUint32(value, name, positive = false) {
  validateInteger(value, name, positive ? 1 : 0, 4294967295);
}

function validateNumber(value, name, min, max) {
  if (typeof value !== 'number') throw codedError('ERR_INVALID_ARG_TYPE', name, 'of type number', value);
  if ((min != null && value < min) || (max != null && value > max) || ((min != null || max != null) && Number.isNaN(value))) {
    const range = min != null && max != null ? `>= ${min} && <= ${max}` : min != null ? `>= ${min}` : `<= ${max}`;
    throw codedError('ERR_OUT_OF_RANGE', name, range, value);
  }
}

function validateString(value, name) {
  if (typeof value !== 'string') throw codedError('ERR_INVALID_ARG_TYPE', name, 'of type string', value);
}

function validateBoolean(value, name) {
  if (typeof value !== 'boolean') throw codedError('ERR_INVALID_ARG_TYPE', name, 'of type boolean', value);
}

function validateFunction(value, name) {
  if (typeof value !== 'function') throw codedError('ERR_INVALID_ARG_TYPE', name, 'of type function', value);
}

// validateObject takes Node's option names: allowArray, allowFunction,
// nullable.
function validateObject(value, name, { allowArray = false, allowFunction = false, nullable = false } = {}) {
  const ok = (nullable && value === null) ||
    (value !== null && (typeof value === 'object' || (allowFunction && typeof value === 'function')) &&
      (allowArray || !Array.isArray(value)));
  if (!ok) throw codedError('ERR_INVALID_ARG_TYPE', name, 'of type object', value);
}

function validateArray(value, name, minLength = 0) {
  if (!Array.isArray(value)) throw codedError('ERR_INVALID_ARG_TYPE', name, 'an instance of Array', value);
  if (value.length < minLength) throw codedError('ERR_INVALID_ARG_VALUE', name, value, `must be longer than ${minLength}`);
}

function validateBuffer(value, name = 'buffer') {
  if (!ArrayBuffer.isView(value)) throw codedError('ERR_INVALID_ARG_TYPE', name, ['Buffer', 'TypedArray', 'DataView'], value);
}

function validateAbortSignal(signal, name) {
  if (signal !== undefined && (signal === null || typeof signal !== 'object' || !('aborted' in signal))) {
    throw codedError('ERR_INVALID_ARG_TYPE', name, 'an instance of AbortSignal', signal);
  }
}

function validateOneOf(value, name, oneOf) {
  if (!oneOf.includes(value)) {
    const allowed = oneOf.map((v) => (typeof v === 'string' ? `'${v}'` : String(v))).join(', ');
    throw codedError('ERR_INVALID_ARG_VALUE', name, value, `must be one of: ${allowed}`);
  }
}

const octal = /^[0-7]+$/;
// parseFileMode is Node's: a mode is a 32-bit unsigned integer or an
// octal string; undefined gives def.
function parseFileMode(value, name, def) {
  if (value === undefined || value === null) value = def;
  if (typeof value === 'string') {
    if (!octal.test(value)) throw codedError('ERR_INVALID_ARG_VALUE', name, value, 'must be a 32-bit unsigned integer or an octal string');
    value = parseInt(value, 8);
  }
  validateUint32(value, name);
  return value;
}

// validateEncoding rejects an encoding Buffer does not know, as Node's
// fs does before it touches the file.
function validateEncoding(encoding) {
  if (encoding && encoding !== 'buffer' && !require('../buffer.js').Buffer.isEncoding(encoding)) {
    throw codedError('ERR_INVALID_ARG_VALUE', 'encoding', encoding, 'is invalid encoding');
  }
}

module.exports = {
  validateInteger, validateInt32, validateUint32, validateNumber, validateString, validateBoolean,
  validateFunction, validateObject, validateArray, validateBuffer, validateAbortSignal, validateOneOf,
  parseFileMode, validateEncoding,
};
