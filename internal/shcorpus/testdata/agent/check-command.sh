if command -v some-missing-tool >/dev/null 2>&1; then
  echo "have tool"
else
  echo "tool missing, falling back" >&2
fi
command -v cat >/dev/null && echo "have cat"
