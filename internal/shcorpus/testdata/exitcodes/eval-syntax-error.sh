eval 'if then fi'
echo "status $?"
eval 'echo "unterminated'
echo "status $?"
