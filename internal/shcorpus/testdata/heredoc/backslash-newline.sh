#!/bin/sh
cat <<EOF
one \
continued
two\\
EOF
cat <<'EOF'
raw \
kept
EOF
