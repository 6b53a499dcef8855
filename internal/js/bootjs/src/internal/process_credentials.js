'use strict';
// process.setuid and its kin, as Node's wrapPosixCredentialSetters: the
// arguments are checked, names are looked up in the VM's /etc/passwd and
// /etc/group, and the change itself is refused with EPERM (the kernel
// gives a process no way to change its credentials).
const { codedError } = require('./errors.js');
const { validateUint32, validateArray } = require('./validators.js');

function validateId(id, name) {
  if (typeof id === 'number') validateUint32(id, name);
  else if (typeof id !== 'string') throw codedError('ERR_INVALID_ARG_TYPE', name, ['number', 'string'], id);
}

// lookup is the numeric id of a name in the VM's database (/etc/passwd
// or /etc/group), -1 when it is not there; a number is itself, as for
// libc's setuid.
function lookup(file, id) {
  if (typeof id === 'number') return id >>> 0;
  let text = '';
  try {
    text = require('../fs.js').readFileSync(file, 'latin1');
  } catch {
    return -1;
  }
  for (const line of text.split('\n')) {
    const f = line.split(':');
    if (f[0] === id && f.length > 2 && /^\d+$/.test(f[2])) return Number(f[2]);
  }
  return -1;
}

// eperm is the error Node's setuid family throws (ErrnoException): a
// positive errno and "EPERM, Operation not permitted".
function eperm(syscall) {
  const err = new Error('EPERM, Operation not permitted');
  err.errno = 1;
  err.code = 'EPERM';
  err.syscall = syscall;
  return err;
}

// idSetter makes setuid and its kin: setting the id the process has is
// allowed (as for an unprivileged process on Linux), any other is EPERM.
function idSetter(type, file, syscall, current) {
  return {
    [syscall](id) {
      validateId(id, 'id');
      const n = lookup(file, id);
      if (n < 0) throw codedError('ERR_UNKNOWN_CREDENTIAL', type, id);
      if (n !== current()) throw eperm(syscall);
    },
  }[syscall];
}

function setgroups(groups) {
  validateArray(groups, 'groups');
  for (let i = 0; i < groups.length; i++) validateId(groups[i], `groups[${i}]`);
  for (const g of groups) if (lookup('/etc/group', g) < 0) throw codedError('ERR_UNKNOWN_CREDENTIAL', 'Group', g);
  throw eperm('setgroups');
}

function initgroups(user, extraGroup) {
  validateId(user, 'user');
  validateId(extraGroup, 'extraGroup');
  if (lookup('/etc/group', extraGroup) < 0) throw codedError('ERR_UNKNOWN_CREDENTIAL', 'Group', extraGroup);
  if (lookup('/etc/passwd', user) < 0) throw codedError('ERR_UNKNOWN_CREDENTIAL', 'User', user);
  throw eperm('initgroups');
}

module.exports = {
  setuid: idSetter('User', '/etc/passwd', 'setuid', () => process.getuid()),
  seteuid: idSetter('User', '/etc/passwd', 'seteuid', () => process.geteuid()),
  setgid: idSetter('Group', '/etc/group', 'setgid', () => process.getgid()),
  setegid: idSetter('Group', '/etc/group', 'setegid', () => process.getegid()),
  setgroups,
  initgroups,
};
