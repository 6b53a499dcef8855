shopt -s extglob
touch a.js b.ts c.md
echo !(*.md)
echo *.@(js|ts)
case foo123 in +([a-z])+([0-9])) echo extglob case ;; esac
