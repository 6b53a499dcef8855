p='*'
case abc in "$p") echo "literal star" ;; $p) echo "glob star" ;; esac
case '*' in "$p") echo "literal match" ;; esac
