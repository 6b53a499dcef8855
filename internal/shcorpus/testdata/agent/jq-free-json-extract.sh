cat > resp.json <<'EOF'
{"id": 42, "name": "task-runner", "tags": ["x", "y"]}
EOF
id=$(sed -n 's/.*"id": \([0-9]*\).*/\1/p' resp.json)
name=$(grep -o '"name": "[^"]*"' resp.json | cut -d'"' -f4)
echo "id=$id name=$name"
