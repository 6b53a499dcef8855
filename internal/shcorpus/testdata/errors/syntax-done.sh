eval 'for x in a; echo $x; done'
echo "status $?"
