cat > .gitignore <<'EOF'
node_modules/
*.log
.env*
!/.env.example
EOF
wc -l < .gitignore
grep -n '^!' .gitignore
