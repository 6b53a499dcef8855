x=$(cat <<'EOF'
inside $(subst)
EOF
)
echo "$x"
