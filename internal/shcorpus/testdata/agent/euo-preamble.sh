#!/usr/bin/env bash
set -euo pipefail
IFS=$'\n\t'
PROJECT=${PROJECT:-demo}
echo "setting up $PROJECT"
mkdir -p "$PROJECT/src"
printf 'console.log("hi")\n' > "$PROJECT/src/index.js"
ls "$PROJECT/src"
