printf 'no-newline' | { read -r line; echo "status $? line=$line"; }
printf '' | { read -r line; echo "status $? line=[$line]"; }
