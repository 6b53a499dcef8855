for x in apple Banana cherry 42 ""; do
  case $x in
    a*) echo "$x: starts with a" ;;
    [A-Z]*) echo "$x: capital" ;;
    *[0-9]) echo "$x: ends with digit" ;;
    "") echo "empty" ;;
    *) echo "$x: other" ;;
  esac
done
