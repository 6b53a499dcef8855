import { run } from 'node:test';
import { tap } from 'node:test/reporters';
import path from 'node:path';
const stream = run({ files: [path.resolve('one.test.js'), path.resolve('two.test.js')] });
let fails = 0;
stream.on('test:fail', () => { fails++; });
process.on('exit', () => { console.log('fails seen: ' + fails); });
stream.compose(tap).pipe(process.stdout);
