set -euo pipefail
NAME="widget"
DESC="Widget's helper"
cat > manifest.json <<EOF2
{"name": "$NAME", "description": "$DESC", "tags": ["a", "b"], "nested": {"k": [1, 2, {"x": null}]}}
EOF2
cat manifest.json
grep -o '"tags": \[[^]]*\]' manifest.json
