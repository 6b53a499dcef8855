[[ foo.txt == *.txt ]] && echo glob match
[[ foo.txt == "*.txt" ]] || echo quoted no match
[[ abc123 =~ ^[a-z]+([0-9]+)$ ]] && echo "regex ${BASH_REMATCH[1]}"
re='^v([0-9]+)\.([0-9]+)'
[[ v1.22 =~ $re ]] && echo "major ${BASH_REMATCH[1]} minor ${BASH_REMATCH[2]}"
