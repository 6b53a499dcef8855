for c in a Z 5 ' ' _; do
  case $c in
    [[:lower:]]) echo "lower" ;;
    [[:upper:]]) echo "upper" ;;
    [[:digit:]]) echo "digit" ;;
    [[:space:]]) echo "space" ;;
    *) echo "other" ;;
  esac
done
