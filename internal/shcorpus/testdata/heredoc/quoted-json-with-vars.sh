cat > b.json <<'EOF'
{"env": "$NODE_ENV", "cmd": "echo $(whoami)", "it's": "literal"}
EOF
cat b.json
