#!/bin/sh
NAME=x
cat > p.json <<EOF
{"name": "$NAME", "v": [1, 2], "it's": true}
EOF
cat p.json
