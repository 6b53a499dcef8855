'use strict';
// The global console's methods and a new Console's are bound to it but
// keep their own names, and none of them is a constructor.
const { Console } = console;
const c = new Console(process.stdout);
const methods = ['log', 'warn', 'error', 'info', 'debug', 'dir', 'dirxml', 'time', 'timeEnd', 'timeLog', 'trace',
  'assert', 'count', 'countReset', 'group', 'groupEnd', 'groupCollapsed', 'table'];
for (const m of methods) {
  let constructs = false;
  try { new c[m](); constructs = true; } catch { /* TypeError expected */ }
  console.log(m, console[m].name === m, c[m].name === m, constructs);
}
const { log } = c;
log('detached log still prints');
