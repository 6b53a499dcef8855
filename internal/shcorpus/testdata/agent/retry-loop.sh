attempt=0
until [ $attempt -ge 3 ]; do
  attempt=$((attempt+1))
  if [ $attempt -eq 3 ]; then echo "succeeded on attempt $attempt"; break; fi
  echo "attempt $attempt failed" >&2
done
