for i in 1; do false; done
echo "status $?"
for i in; do :; done
echo "status $?"
