echo "line $LINENO"
f() {
  echo "in f line $LINENO"
}
f
