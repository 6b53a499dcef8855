mkdir bin
echo 'echo "found via PATH"' > bin/helper.sh
PATH="$PWD/bin:$PATH"
source helper.sh
