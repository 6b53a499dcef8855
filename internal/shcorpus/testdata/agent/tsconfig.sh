cat > tsconfig.json <<'EOF'
{
  "compilerOptions": {
    "target": "ES2020",
    "strict": true,
    "outDir": "./dist"
  },
  "include": ["src/**/*"]
}
EOF
sed -n 's/.*"target": "\(.*\)".*/\1/p' tsconfig.json
