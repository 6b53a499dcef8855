mapfile -t rows <<'EOF'
r1
r2 with space
EOF
printf '<%s>\n' "${rows[@]}"
