set -u
f() {
  echo "in f"
  echo "$undefined_here"
}
f
