const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
try {
  execFileSync(process.execPath, ['--test-reporter=tap', '--test-reporter-destination=out.tap', '--test-reporter=dot', '--test-reporter-destination=stdout', 'd.test.js'], { stdio: 'inherit' });
} catch (e) { console.log('status ' + e.status); }
console.log(fs.readFileSync('out.tap', 'utf8').replace(/duration_ms.*/g, 'D').split('\n').filter((l) => !/^\s+\S.*:\d+:\d+\)?$/.test(l)).join('\n'));
