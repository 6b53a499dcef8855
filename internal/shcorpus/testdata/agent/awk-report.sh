cat > sizes.txt <<'EOF'
alpha 10
beta 25
gamma 5
EOF
awk '{ total += $2; print $1 } END { print "total", total }' sizes.txt
sort -k2 -n sizes.txt | head -n 1 | cut -d' ' -f1
