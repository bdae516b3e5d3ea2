#!/usr/bin/env bash
# Fails when a layer includes a header of a layer above it.
# Order (low -> high): base kernels autograd nn model data train cli
set -euo pipefail
cd "$(dirname "$0")/.."
layers=(base kernels autograd nn model data train cli)
rank() { local i; for i in "${!layers[@]}"; do [ "${layers[$i]}" = "$1" ] && echo "$i" && return; done; echo -1; }
bad=0
for layer in "${layers[@]}"; do
  r=$(rank "$layer")
  for dir in "src/$layer" "include/attnfc/$layer"; do
    [ -d "$dir" ] || continue
    while IFS= read -r hit; do
      file=${hit%%:*}
      inc=$(sed -E 's/.*#include +"attnfc\/([a-z]+)\/.*/\1/' <<<"$hit")
      ir=$(rank "$inc")
      if [ "$ir" -gt "$r" ]; then
        echo "layering: $file ($layer) includes attnfc/$inc/ (a higher layer)"
        bad=1
      fi
    done < <(grep -rnE '#include +"attnfc/[a-z]+/' "$dir" || true)
  done
done
[ $bad -eq 0 ] && echo "layering: ok (${layers[*]})"
exit $bad
