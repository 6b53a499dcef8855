'use strict';
const path = require('node:path');
const { test } = require('node:test');

test('defined in lib.js', (t) => console.log('lib', path.relative(process.cwd(), t.filePath)));
