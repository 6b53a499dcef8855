cat > cli.sh <<'EOF'
usage() { echo "usage: cli.sh <name>" >&2; exit 64; }
[ $# -eq 1 ] || usage
echo "hello $1"
EOF
bash cli.sh
echo "exit $?"
bash cli.sh bob
