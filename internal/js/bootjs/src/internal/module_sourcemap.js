'use strict';
// Stack traces of transformed scripts (TypeScript, ES modules) show the
// original file, line and column. esbuild's source map of each such
// script stays in Go (modules.Scripts); once one is loaded, an
// Error.prepareStackTrace that formats frames as V8 does asks Go to map
// the positions in those scripts. Processes that load only CommonJS never
// install it.
const { B } = require('./bridge.js');
const P = require('./primordials.js');

const mapped = new P.MapCtor();
const ErrorPrototypeToString = P.uncurry(Error.prototype.toString);
const StringPrototypeLastIndexOf = P.uncurry(String.prototype.lastIndexOf);
let installed = false;

// add records a script whose positions map back to its source.
function add(script) {
  if (typeof script !== 'string') return;
  P.MapPrototypeSet(mapped, script, true);
  if (!installed) {
    installed = true;
    // A guest's own formatter (source-map-support and the like) wins.
    if (Error.prepareStackTrace === undefined) Error.prepareStackTrace = prepareStackTrace;
  }
}

function prepareStackTrace(error, frames) {
  let s;
  try {
    s = ErrorPrototypeToString(error);
  } catch {
    s = '<error>';
  }
  for (let i = 0; i < frames.length; i++) {
    let f;
    try {
      f = frameString(frames[i]);
    } catch {
      f = '<error>';
    }
    s += `\n    at ${f}`;
  }
  return s;
}

// frameString is V8's text for a call site with the position mapped.
function frameString(frame) {
  const text = `${frame}`;
  // Code run by eval (-e, -p, stdin) has no file name, only its
  // sourceURL.
  let name = frame.getFileName();
  if (name === undefined && typeof frame.getScriptNameOrSourceURL === 'function') name = frame.getScriptNameOrSourceURL();
  if (typeof name !== 'string' || !P.MapPrototypeHas(mapped, name)) return text;
  const line = frame.getLineNumber();
  const col = frame.getColumnNumber();
  if (!line || !col) return text;
  const to = B.mapPosition(name, line, col);
  if (typeof to !== 'string') return text;
  const from = `${name}:${line}:${col}`;
  const i = StringPrototypeLastIndexOf(text, from);
  if (i < 0) return text;
  return P.StringPrototypeSlice(text, 0, i) + `${name}:${to}` + P.StringPrototypeSlice(text, i + from.length);
}

// mapLocation maps a "line:column" position of a script, for callers
// that hold positions rather than frames; it returns undefined when the
// script is not mapped.
function mapLocation(name, line, col) {
  if (!P.MapPrototypeHas(mapped, name)) return undefined;
  const to = B.mapPosition(name, line, col);
  return typeof to === 'string' ? to : undefined;
}

module.exports = { add, prepareStackTrace, mapLocation };
