n=$(( $(echo 6) * $(echo 7) ))
echo $n
