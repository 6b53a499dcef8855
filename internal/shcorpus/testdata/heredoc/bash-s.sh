bash -s arg1 <<'EOF'
echo "stdin script got $1"
exit 4
EOF
echo "status $?"
