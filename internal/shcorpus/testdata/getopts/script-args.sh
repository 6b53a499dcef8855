cat > tool.sh <<'EOF'
verbose=0 out=-
while getopts "vo:" opt; do
  case $opt in
    v) verbose=1 ;;
    o) out=$OPTARG ;;
    *) echo "usage: tool [-v] [-o out]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND-1))
echo "verbose=$verbose out=$out args=$*"
EOF
bash tool.sh -v -o x.txt a b
bash tool.sh -z
echo "exit $?"
