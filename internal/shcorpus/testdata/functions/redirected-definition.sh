log() { echo "log: $*"; } >&2
log hello 2>&1
