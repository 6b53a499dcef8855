ls() { echo "not the real ls"; }
ls
mkdir dd && touch dd/file
command ls dd
