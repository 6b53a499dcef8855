work() { echo "working on $1" > "job.$1"; }
work a &
work b &
wait
cat job.a job.b
