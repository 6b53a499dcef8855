f="a b"
echo x > $f
echo "status $?"
