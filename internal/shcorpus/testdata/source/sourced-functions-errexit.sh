set -euo pipefail
cat > lib.sh <<'EOF'
require() { [ -n "${!1:-}" ] || { echo "missing $1" >&2; return 1; }; }
EOF
source lib.sh
TOKEN=abc
require TOKEN && echo "TOKEN ok"
require OTHER
echo REACHED
