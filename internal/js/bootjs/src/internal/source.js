'use strict';
// Sources of the scripts the runtime compiled, so that an uncaught error
// can be reported with the offending line, as Node does.
const sources = new Map();
const MAX = 64;

function remember(filename, source) {
  if (sources.size >= MAX) sources.delete(sources.keys().next().value);
  sources.set(filename, source);
}

function errorSourceLine(err) {
  if (!err || typeof err.stack !== 'string') return '';
  const m = /\n    at (?:.*? \()?(.+?):(\d+):(\d+)\)?\n?/.exec(err.stack);
  if (!m) return '';
  const src = sources.get(m[1]);
  if (src === undefined) return '';
  const line = src.split('\n')[+m[2] - 1];
  if (line === undefined || line.length > 200) return '';
  return `${m[1]}:${m[2]}\n${line}\n${' '.repeat(Math.max(0, +m[3] - 1))}^\n\n`;
}

module.exports = { remember, errorSourceLine };
