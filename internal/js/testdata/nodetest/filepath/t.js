'use strict';
// t.filePath is the file the process started with, also for tests that a
// required module defines, in suites, tests and subtests.
const path = require('node:path');
const { suite, test } = require('node:test');

const show = (where, t) => console.log(where, path.relative(process.cwd(), t.filePath), t.filePath === __filename);
suite('suite', (s) => {
  show('suite', s);
  test('test', (t) => {
    show('test', t);
    return t.test('subtest', (st) => show('subtest', st));
  });
});
require('./lib.js');
