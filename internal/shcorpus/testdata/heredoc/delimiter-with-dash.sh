cat <<END-OF-TEXT
dash delimiter
END-OF-TEXT
cat <<'_EOF_'
underscores
_EOF_
