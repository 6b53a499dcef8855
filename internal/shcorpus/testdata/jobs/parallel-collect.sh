for i in 3 1 2; do
  ( echo "task $i" > "out.$i" ) &
done
wait
cat out.1 out.2 out.3
