set -o pipefail
{ echo "step 1"; echo "step 2"; } | tee build.log | grep -c step
cat build.log
