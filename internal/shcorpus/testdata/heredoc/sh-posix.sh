#!/bin/sh
name=posix
cat <<EOF
hello $name
EOF
cat <<'EOF'
literal $name
EOF
