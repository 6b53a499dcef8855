echo data > f
read -r -t 1 line < f
echo "status $? line=$line"
