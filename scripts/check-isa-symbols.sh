#!/usr/bin/env bash
# The kernels of src/kernels/isa/ are compiled once per instruction set (AVX-512, AVX2 and
# portable on x86-64, neon and portable on aarch64). If one of those objects defined a
# symbol outside its own namespace attnfc::kernels::<isa> (an inline function or template
# instantiation, e.g. of std::string), the linker could keep the AVX-512 copy for the whole
# program, which then dies with SIGILL on a CPU without AVX-512. This check fails on any
# such symbol.
#   scripts/check-isa-symbols.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: check-isa-symbols.sh BUILD_DIR}
status=0
found=0
for dir in "$build"/CMakeFiles/attnfc_kernels_*.dir; do
  [[ -d $dir ]] || continue
  isa=${dir##*/attnfc_kernels_}
  isa=${isa%.dir}
  objs=$(find "$dir" -name '*.o')
  [[ -n $objs ]] || continue
  found=$((found + 1))
  # Defined symbols with external (or weak/unique) linkage, demangled.
  # ASan adds one "__odr_asan.<mangled name>" indicator per global: judge it by that name.
  bad=$(nm --defined-only $objs | awk 'NF >= 3 && $2 ~ /^[TWVBDRGSu]$/ { print $3 }' |
        sed 's/^__odr_asan\.//' | c++filt | grep -v "attnfc::kernels::$isa::" |
        grep -v '^DW\.ref\.__gxx_personality_v0$' | sort -u || true)
  if [[ -n $bad ]]; then
    echo "check-isa-symbols: the $isa kernels define symbols outside attnfc::kernels::$isa::" >&2
    echo "$bad" | sed 's/^/    /' >&2
    echo "  move that code to a common file (src/kernels/*.cpp) or into the namespace" >&2
    status=1
  fi
done
if [[ $found -eq 0 ]]; then
  echo "check-isa-symbols: no per-ISA kernel objects under $build/CMakeFiles" >&2
  exit 1
fi
[[ $status -eq 0 ]] && echo "check-isa-symbols: $found instruction sets, no shared symbols"
exit $status
