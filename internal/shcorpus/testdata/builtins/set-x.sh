set -x
echo traced
x=$((1+1))
set +x
echo untraced
