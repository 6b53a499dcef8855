f=.gitignore
for e in node_modules dist node_modules .env; do
  grep -qxF "$e" "$f" 2>/dev/null || echo "$e" >> "$f"
done
cat "$f"
