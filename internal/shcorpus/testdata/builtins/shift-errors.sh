set -- a b
shift 3
echo "status $? args $#"
shift 2
echo "status $? args $#"
