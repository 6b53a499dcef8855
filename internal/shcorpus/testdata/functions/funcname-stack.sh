inner() { echo "${FUNCNAME[@]}"; }
outer() { inner; }
outer
