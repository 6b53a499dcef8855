for i in 1 2; do
  cat <<EOF
item $i
EOF
done
