cd /definitely/not/here
echo "status $?"
