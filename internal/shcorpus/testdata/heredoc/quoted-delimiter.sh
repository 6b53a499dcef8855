#!/bin/sh
x=expanded
cat <<'EOF'
$x $(echo no) `echo no` \$ \\ it's "quoted"
EOF
