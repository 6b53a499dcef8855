// tty.WriteStream.prototype.getColorDepth/hasColors follow the
// environment given (or process.env), not a stream: tools call them on
// the prototype before any stream exists (tsx's help does at load).
const tty = require('node:tty');
const proto = tty.WriteStream.prototype;
const envs = [
  {}, { TERM: 'dumb' }, { TERM: 'xterm' }, { TERM: 'xterm-256color' }, { TERM: 'screen' }, { TERM: 'linux' },
  { TERM: 'vt100' }, { TERM: 'mosh' }, { TERM: 'xterm-kitty' }, { TERM: 'Konsole' }, { TERM: 'weird' },
  { TERM: 'foo-truecolor' }, { COLORTERM: 'truecolor' }, { COLORTERM: '24bit' }, { COLORTERM: 'yes' },
  { FORCE_COLOR: '' }, { FORCE_COLOR: '0' }, { FORCE_COLOR: '1' }, { FORCE_COLOR: 'true' }, { FORCE_COLOR: '2' },
  { FORCE_COLOR: '3' }, { FORCE_COLOR: 'x' }, { NO_COLOR: '', TERM: 'xterm-256color' },
  { NODE_DISABLE_COLORS: '1', TERM: 'xterm' }, { TMUX: '1' }, { CI: '1' }, { CI: '1', GITHUB_ACTIONS: '' },
  { CI: '1', TRAVIS: '1' }, { CI: '1', GITLAB_CI: '1' }, { CI: '1', CI_NAME: 'codeship' }, { CI: '1', CIRCLECI: '' }, { CI: '1', GITEA_ACTIONS: '' }, { TERM: 'rxvt-unicode-24bit' }, { TERM: 'terminator' }, { TERM: 'xterm-256' },
  { TEAMCITY_VERSION: '9.1.0' }, { TEAMCITY_VERSION: '8.0' }, { TEAMCITY_VERSION: '10.0' },
  { TERM_PROGRAM: 'iTerm.app' }, { TERM_PROGRAM: 'iTerm.app', TERM_PROGRAM_VERSION: '3.4' },
  { TERM_PROGRAM: 'iTerm.app', TERM_PROGRAM_VERSION: '2.9' }, { TERM_PROGRAM: 'Apple_Terminal' },
  { TERM_PROGRAM: 'HyperTerm' }, { TERM_PROGRAM: 'MacTerm' },
];
for (const env of envs) {
  console.log(JSON.stringify(env), proto.getColorDepth(env), proto.hasColors(env), proto.hasColors(256, env), proto.hasColors(2 ** 24, env));
}
for (const name of ['getColorDepth', 'hasColors', 'getWindowSize', 'cursorTo', 'moveCursor', 'clearLine', 'clearScreenDown']) {
  console.log(name, typeof proto[name]);
}
// With no env, process.env decides.
// (Written as a string: FORCE_COLOR would colour console.log's numbers.)
process.env.FORCE_COLOR = '3';
process.stdout.write(`${proto.getColorDepth()} ${proto.hasColors()} ${proto.hasColors(2 ** 24)}\n`);
delete process.env.FORCE_COLOR;
for (const bad of [1, 1.5, '16']) {
  try {
    proto.hasColors(bad, {});
    console.log('no error for', bad);
  } catch (e) {
    console.log(JSON.stringify(bad), e.name, e.code);
  }
}
