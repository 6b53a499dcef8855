case b in
  a) echo a ;;
  b) echo b ;&
  c) echo "c (fell through)" ;;
  d) echo d ;;
esac
case x in
  x) echo x ;;&
  *) echo "star (continued)" ;;
esac
