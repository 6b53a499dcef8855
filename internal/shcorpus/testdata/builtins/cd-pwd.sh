mkdir -p a/b
cd a/b
basename "$(pwd)"
cd ..
basename "$PWD"
cd - > /dev/null
basename "$PWD"
cd nonexistent-dir
echo "status $?"
