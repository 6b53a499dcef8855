main() { echo "main called with $#: $*"; }
if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  main "$@"
fi
echo 'echo "sourced: ${BASH_SOURCE[0]} vs $0"' > lib.sh
source ./lib.sh
