exec > log.txt
echo into log
exec >&2
echo "to stderr now"
cat log.txt >&2
