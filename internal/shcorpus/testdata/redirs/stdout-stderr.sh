echo out
echo err >&2
{ echo a; echo b >&2; } 2>&1
