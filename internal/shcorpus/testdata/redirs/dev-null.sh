echo hidden > /dev/null
ls /nonexistent 2>/dev/null
echo "status $?"
