#!/bin/sh
NAME=my-app
VERSION=1.2.3
cat > package.json <<EOF
{"name": "$NAME", "v": [1, 2], "note": "it's fine"}
EOF
cat package.json
