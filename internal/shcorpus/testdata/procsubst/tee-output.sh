echo data | tee >(cat > copy.txt) > /dev/null
sleep 0.2
cat copy.txt
