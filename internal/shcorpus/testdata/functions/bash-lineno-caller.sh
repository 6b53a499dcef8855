inner() { echo "inner: ${BASH_LINENO[*]} / ${FUNCNAME[*]} / $(caller) / $(caller 0)"; }
outer() {
  inner
}
outer
echo "top: [${BASH_LINENO[*]}]"; caller; echo "st $?"
f() { caller 1; echo "st $?"; }
f
