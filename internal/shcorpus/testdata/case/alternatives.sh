for f in a.tar.gz b.zip c.txt; do
  case $f in
    *.tar.gz|*.tgz) echo "$f tarball" ;;
    *.zip) echo "$f zip" ;;
    *) echo "$f plain" ;;
  esac
done
