'use strict';
// util.types on V8's own predicates (bridge_types.go; the order of names
// here is the order of its typeChecks).
const { B } = require('./bridge.js');

const names = [
  'isArgumentsObject', 'isArrayBuffer', 'isAsyncFunction', 'isBigInt64Array', 'isBigIntObject', 'isBigUint64Array',
  'isDataView', 'isDate', 'isExternal', 'isFloat32Array', 'isFloat64Array', 'isGeneratorFunction', 'isGeneratorObject',
  'isInt8Array', 'isInt16Array', 'isInt32Array', 'isMap', 'isMapIterator', 'isModuleNamespaceObject', 'isNativeError',
  'isNumberObject', 'isPromise', 'isProxy', 'isRegExp', 'isSet', 'isSetIterator', 'isSharedArrayBuffer',
  'isStringObject', 'isSymbolObject', 'isTypedArray', 'isUint8Array', 'isUint8ClampedArray', 'isUint16Array',
  'isUint32Array', 'isWeakMap', 'isWeakSet',
];

const types = {};
for (let i = 0; i < names.length; i++) {
  const index = i;
  // Primitives are never any of these: no bridge call for them.
  types[names[i]] = { [names[i]](v) { return (typeof v === 'object' || typeof v === 'function') && v !== null && B.isType(v, index); } }[names[i]];
}

const { valueOf } = Boolean.prototype;
const { call } = Function.prototype;
types.isBooleanObject = function isBooleanObject(v) {
  if (typeof v !== 'object' || v === null) return false;
  try { call.call(valueOf, v); return true; } catch { return false; }
};
types.isBoxedPrimitive = function isBoxedPrimitive(v) {
  return types.isNumberObject(v) || types.isStringObject(v) || types.isBooleanObject(v) ||
    types.isBigIntObject(v) || types.isSymbolObject(v);
};
types.isAnyArrayBuffer = function isAnyArrayBuffer(v) { return types.isArrayBuffer(v) || types.isSharedArrayBuffer(v); };
types.isArrayBufferView = function isArrayBufferView(v) { return ArrayBuffer.isView(v); };
types.isKeyObject = function isKeyObject(v) {
  const { KeyObject } = require('../crypto.js');
  return typeof KeyObject === 'function' && v instanceof KeyObject;
};
types.isCryptoKey = function isCryptoKey(v) {
  return require('./webcrypto.js').isCryptoKey(v);
};

module.exports = types;
