set -eo pipefail
echo start
printf 'a\nb\n' | grep zzz | sort
echo REACHED
