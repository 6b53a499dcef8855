mkdir d && touch d/b d/a d/C d/.hidden d/10 d/9
echo d/*
shopt -s dotglob
echo d/*
