printf '%-10s %5s\n' NAME SIZE
for f in alpha beta gamma; do printf '%-10s %5d\n' "$f" ${#f}; done
