kill -l 15
kill -l TERM
kill -l 9
