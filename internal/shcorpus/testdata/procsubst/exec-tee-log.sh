exec 3>&1
exec > >(tee run.log)
pid=$!
echo "logged line"
exec >&3 3>&-
wait $pid
cat run.log >&2
