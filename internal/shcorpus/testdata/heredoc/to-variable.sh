v=$(cat <<EOF
line one
line two
EOF
)
echo "[$v]"
read -r -d '' w <<'EOF' || true
alpha
beta
EOF
echo "[$w]"
