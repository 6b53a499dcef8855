echo 'echo hi' > script
./script
echo "status $?"
chmod +x script
./script
echo "status $?"
