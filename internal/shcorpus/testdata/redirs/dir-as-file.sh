mkdir d
echo x > d
echo "status $?"
