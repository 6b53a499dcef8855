set -euo pipefail
NAME="my-tool"
VERSION="0.3.1"
AUTHOR="O'Brien"
cat > package.json <<EOF
{
  "name": "$NAME",
  "version": "$VERSION",
  "author": "$AUTHOR",
  "main": "index.js",
  "scripts": {"build": "tsc", "test": "jest --ci"},
  "keywords": ["cli", "tool"],
  "dependencies": {}
}
EOF
grep '"name"' package.json
wc -l package.json
