#!/usr/bin/env bash
# Fails when a layer includes a header of a layer it may not use. The edge table
# below is the dependency graph drawn in docs/ARCHITECTURE.md; CMake links each layer
# to exactly its direct edges, but all headers sit in one include directory, so only
# this check stops a stray #include.
set -euo pipefail
cd "$(dirname "$0")/.."
# layer: the layers it uses directly (their own edges are allowed too).
declare -A uses=(
  [base]=""
  [kernels]="base"
  [autograd]="kernels"
  [nn]="autograd"
  [model]="nn"
  [data]="base"
  [dist]="base"
  [train]="model data dist"
  [cli]="train"
)
# Everything reachable from $1 (itself included).
reachable() {
  local todo=("$1") seen=" " l
  while [ ${#todo[@]} -gt 0 ]; do
    l=${todo[0]}
    todo=("${todo[@]:1}")
    case "$seen" in *" $l "*) continue ;; esac
    seen+="$l "
    # shellcheck disable=SC2206
    todo+=(${uses[$l]})
  done
  echo "$seen"
}
bad=0
for layer in "${!uses[@]}"; do
  allowed=$(reachable "$layer")
  for dir in "src/$layer" "include/attnfc/$layer"; do
    [ -d "$dir" ] || continue
    while IFS= read -r hit; do
      file=${hit%%:*}
      inc=$(sed -E 's/.*#include +"attnfc\/([a-z]+)\/.*/\1/' <<<"$hit")
      if [ -z "${uses[$inc]+x}" ]; then
        echo "layering: $file includes attnfc/$inc/, which is not a layer in scripts/check-layers.sh"
        bad=1
      elif [[ "$allowed" != *" $inc "* ]]; then
        echo "layering: $file ($layer) includes attnfc/$inc/; $layer may use only:$allowed"
        bad=1
      fi
    done < <(grep -rnE '#include +"attnfc/[a-z]+/' "$dir" || true)
  done
done
if [ $bad -eq 0 ]; then
  for layer in base kernels autograd nn model data train cli; do
    printf 'layering: %-8s -> %s\n' "$layer" "${uses[$layer]:-(nothing)}"
  done
  echo "layering: ok"
fi
exit $bad
