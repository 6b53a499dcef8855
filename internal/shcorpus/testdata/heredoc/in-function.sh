show() {
  cat <<EOF
arg: $1
EOF
}
show hello
show "with space"
