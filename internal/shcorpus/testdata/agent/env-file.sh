cat > .env <<'EOF'
# comment
DB_HOST=localhost
DB_PORT=5432
GREETING="hello world"
EOF
set -a
source .env
set +a
echo "$DB_HOST:$DB_PORT $GREETING"
bash -c 'echo "child: $DB_PORT"'
