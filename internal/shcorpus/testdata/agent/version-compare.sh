ver=3.11.4
IFS=. read -r major minor patch <<< "$ver"
if (( major > 3 || (major == 3 && minor >= 10) )); then echo "new enough: $major.$minor"; fi
echo "patch=$patch"
