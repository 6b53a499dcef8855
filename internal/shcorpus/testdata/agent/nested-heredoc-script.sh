cat > setup.sh <<'OUTER'
#!/bin/bash
set -euo pipefail
cat > config.json <<EOF
{"mode": "${1:-dev}", "debug": true}
EOF
cat config.json
OUTER
bash setup.sh
bash setup.sh prod
