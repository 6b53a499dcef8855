f() {
  trap 'echo "f EXIT trap"' EXIT
  echo in f
}
f
echo "back in main"
