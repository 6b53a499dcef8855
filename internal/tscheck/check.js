'use strict';
// Type-checks TypeScript with the pinned compiler's API, inside a VM's
// node. argv: MODE ("dir" or "files"), ROOT, then the files to check.
// "dir": ROOT holds the files (and maybe a tsconfig.json of its own);
// "files": the files are paths, and the nearest tsconfig.json above the
// first one, if any, gives the options. Prints one JSON document:
// {"diagnostics": [{file, line, column, code, category, message}], "more": n}.
const ts = require('/usr/lib/node_modules/typescript');
const path = require('path');

const MAX = 1000; // diagnostics reported; the rest are counted in "more"
const [mode, root, ...files] = process.argv.slice(1);

const defaults = {
  strict: true,
  noEmit: true,
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  allowImportingTsExtensions: true,
  esModuleInterop: true,
  skipLibCheck: true,
  resolveJsonModule: true,
  types: ['node'],
  typeRoots: ['/usr/lib/node_modules/@types'],
};

function configFor(start, within) {
  const found = ts.findConfigFile(start, ts.sys.fileExists);
  if (!found) return null;
  if (within && !path.resolve(found).startsWith(path.resolve(within) + '/')) return null;
  const host = { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => { throw d; } };
  return ts.getParsedCommandLineOfConfigFile(found, { noEmit: true }, host);
}

let rootNames = files.map((f) => path.resolve(root, f));
let options = defaults;
let configErrors = [];
try {
  const cfg = mode === 'dir' ? configFor(root, root) : configFor(path.dirname(rootNames[0] || root), null);
  if (cfg) {
    options = { ...cfg.options, noEmit: true };
    configErrors = cfg.errors;
    if (mode === 'dir') rootNames = cfg.fileNames;
  }
} catch (d) {
  configErrors = [d];
}

const program = ts.createProgram({ rootNames, options });
const all = [...configErrors, ...ts.getPreEmitDiagnostics(program)];
const out = [];
for (const d of all.slice(0, MAX)) {
  const e = { file: '', line: 0, column: 0, code: d.code, category: ts.DiagnosticCategory[d.category].toLowerCase(),
    message: ts.flattenDiagnosticMessageText(d.messageText, '\n') };
  if (d.file && d.start !== undefined) {
    const { line, character } = d.file.getLineAndCharacterOfPosition(d.start);
    e.file = d.file.fileName;
    e.line = line + 1;
    e.column = character + 1;
  } else if (d.file) {
    e.file = d.file.fileName;
  }
  out.push(e);
}
process.stdout.write(JSON.stringify({ diagnostics: out, more: Math.max(0, all.length - MAX) }));
