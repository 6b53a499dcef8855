printf 'x\ny\n' | tee >(grep x > x.tmp && mv x.tmp x.txt) >(grep y > y.tmp && mv y.tmp y.txt) > /dev/null
# The substitutions belong to tee's process, so wait cannot reach them: poll.
for i in $(seq 100); do [ -e x.txt ] && [ -e y.txt ] && break; sleep 0.05; done
cat x.txt y.txt
