for v in v1 v10 x2 '[x]'; do
  case $v in
    v[0-9]) echo "$v single digit" ;;
    v[0-9]*) echo "$v multi" ;;
    \[*\]) echo "$v bracketed" ;;
    *) echo "$v other" ;;
  esac
done
