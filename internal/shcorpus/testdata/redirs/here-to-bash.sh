cat <<'EOF' | bash
echo "from piped script"
exit 3
EOF
echo "status $?"
