read -r -s secret <<< "hunter2"
echo "len=${#secret}"
