cat > log <<EOF
first
EOF
cat >> log <<EOF
second
EOF
cat log
