shopt -q extglob && echo "extglob on" || echo "extglob off"
shopt -s nocasematch
[[ ABC == abc ]] && echo "nocasematch works"
shopt -u nocasematch
[[ ABC == abc ]] || echo "case sensitive again"
