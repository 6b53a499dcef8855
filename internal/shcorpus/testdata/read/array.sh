read -r -a words <<< "the quick brown fox"
echo "${#words[@]} ${words[3]}"
