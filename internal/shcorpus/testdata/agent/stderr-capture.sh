out=$(nonexistent-tool --version 2>&1)
echo "status $?"
echo "captured: $out"
