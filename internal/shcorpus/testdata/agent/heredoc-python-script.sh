cat > script.py <<'EOF'
import sys
name = 'world'
print(f"hello {name}")
EOF
cat script.py | wc -l
head -n 1 script.py
