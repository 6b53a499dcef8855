set -o pipefail
if printf 'x\n' | grep -q y | cat; then echo yes; else echo no; fi
if printf 'x\n' | grep -q x | cat; then echo yes; else echo no; fi
