echo data | tee >(cat > copy.tmp && mv copy.tmp copy.txt) > /dev/null
for i in $(seq 100); do [ -e copy.txt ] && break; sleep 0.05; done
cat copy.txt
