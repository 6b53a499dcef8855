printf '%q\n' "it's" 'a b' 'tab	x' '$HOME' ''
