f() {
  local 1x=2
  echo "local status $?"
}
f
readonly -- 9=1
echo "readonly status $?"
declare ok=1 2bad=2
echo "declare status $? ok=$ok"
