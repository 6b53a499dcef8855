cat > deploy.sh <<'SCRIPT'
echo "deploying"
cp missing.conf /tmp/never 2>/dev/null
echo "REACHED deploy"
SCRIPT
bash -e deploy.sh
echo "bash -e exit $?"
bash -eu -o pipefail deploy.sh
echo "strict exit $?"
