set -e
case x in
  x) echo matched; false ;;
esac
echo REACHED
