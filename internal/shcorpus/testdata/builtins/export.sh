export A=1
B=2
bash -c 'echo "A=${A-} B=${B-}"'
C=3 bash -c 'echo "C=$C"'
echo "C after: [${C-}]"
export -n A
bash -c 'echo "A=${A-}"'
