case nothing in x) ;; esac
echo "status $?"
case x in x) false ;; esac
echo "status $?"
