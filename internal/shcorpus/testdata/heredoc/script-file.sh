cat > build.sh <<'EOF'
#!/bin/bash
set -euo pipefail
name=${1:-world}
echo "hello, $name"
EOF
bash build.sh
bash build.sh agent
