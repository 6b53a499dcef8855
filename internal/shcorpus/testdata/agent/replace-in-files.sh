mkdir src
printf 'import x from "old-lib"\n' > src/a.ts
printf 'const y = require("old-lib")\n' > src/b.js
for f in src/*; do
  sed -i 's/old-lib/new-lib/g' "$f"
done
cat src/a.ts src/b.js
grep -rc 'new-lib' src | sort
