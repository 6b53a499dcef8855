'use strict';
// Primordials: the built-ins the runtime uses, captured before any guest
// code runs, so that a guest that replaces Array.prototype.push or
// Function.prototype.call cannot redirect the runtime's own operations
// (and, through them, reach the bridge or the scratch buffer).
const { call, bind } = Function.prototype;
const uncurry = bind.bind(call);
const P = Object.create(null);
P.uncurry = uncurry;
P.SharedArrayBuffer = globalThis.SharedArrayBuffer;
P.ArrayBuffer = ArrayBuffer;
P.ArrayBufferIsView = ArrayBuffer.isView;
P.Uint8Array = Uint8Array;
P.Float64Array = Float64Array;
const TA = Object.getPrototypeOf(Uint8Array.prototype);
P.TypedArrayPrototypeSet = uncurry(TA.set);
P.TypedArrayPrototypeSubarray = uncurry(TA.subarray);
P.TypedArrayPrototypeSlice = uncurry(TA.slice);
P.MathMin = Math.min;
P.MathMax = Math.max;
P.MathFloor = Math.floor;
P.TypeError = TypeError;
P.RangeError = RangeError;
P.Error = Error;
P.JSONParse = JSON.parse;
P.JSONStringify = JSON.stringify;
P.StringPrototypeSplit = uncurry(String.prototype.split);
P.StringPrototypeSlice = uncurry(String.prototype.slice);
P.StringPrototypeStartsWith = uncurry(String.prototype.startsWith);
P.StringPrototypeIndexOf = uncurry(String.prototype.indexOf);
P.ArrayPrototypePush = uncurry(Array.prototype.push);
P.ArrayPrototypeShift = uncurry(Array.prototype.shift);
P.ArrayPrototypeSlice = uncurry(Array.prototype.slice);
P.ArrayPrototypeJoin = uncurry(Array.prototype.join);
P.ArrayIsArray = Array.isArray;
P.FunctionPrototypeCall = uncurry(call);
P.ReflectApply = Reflect.apply;
P.ObjectDefineProperty = Object.defineProperty;
P.ObjectFreeze = Object.freeze;
P.ObjectKeys = Object.keys;
P.MapCtor = Map;
P.MapPrototypeGet = uncurry(Map.prototype.get);
P.MapPrototypeSet = uncurry(Map.prototype.set);
P.MapPrototypeDelete = uncurry(Map.prototype.delete);
P.MapPrototypeHas = uncurry(Map.prototype.has);
P.PromiseResolve = Promise.resolve.bind(Promise);
P.indirectEval = globalThis.eval;
module.exports = P;
