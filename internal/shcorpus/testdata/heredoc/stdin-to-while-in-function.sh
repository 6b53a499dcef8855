process() {
  while read -r a b; do echo "$b-$a"; done
}
process <<EOF
1 one
2 two
EOF
