trap 'echo hi' EXIT
trap 'echo usr1' USR1
trap -p EXIT
trap -p USR1
trap - EXIT
