f() { trap 'echo returning from f' RETURN; echo in f; }
f
trap - RETURN
echo end
