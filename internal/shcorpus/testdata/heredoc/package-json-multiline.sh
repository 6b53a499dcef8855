NAME=demo
cat > package.json <<EOF
{
  "name": "$NAME",
  "version": "0.1.0",
  "description": "Bob's \$HOME-free package",
  "scripts": {
    "test": "node test.js && echo 'ok'"
  },
  "files": ["index.js", "lib/*.js"]
}
EOF
cat package.json
wc -l < package.json
