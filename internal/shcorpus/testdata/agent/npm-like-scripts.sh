set -euo pipefail
cat > package.json <<EOF
{
  "name": "app",
  "scripts": {
    "lint": "eslint . --ext .ts",
    "test": "vitest run --reporter=dot"
  }
}
EOF
grep -o '"[a-z]*": "[^"]*"' package.json | sed -n '2,3p'
