printf 'apple\nbanana\ncherry\n' > fruits
grep -f <(echo an) fruits
