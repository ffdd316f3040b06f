#!/usr/bin/env bash
# Checks that a libmentat.so exports only the public API: the C API's mentat_* functions
# and C++ symbols of namespace mentat whose names are declared in include/mentat/ (no
# implementation types: StoreImpl, mentat::query::, mentat::pg::, storage, views, tx...).
#
#   test/install/check_exports.sh LIBMENTAT_SO
set -euo pipefail
LIB=$1
syms=$(nm -D --defined-only "$LIB" | awk '{print $3}' | grep -v '^$')
[ -n "$syms" ] || { echo "check_exports: $LIB exports nothing" >&2; exit 1; }
bad=""
while read -r s; do
  case $s in
    mentat_*) continue ;;
    MENTAT_0) continue ;;
    _ZN6mentat*|_ZNK6mentat*|_ZTVN6mentat*|_ZTIN6mentat*|_ZTSN6mentat*) ;;
    _Z*) # other C++ symbols: only templates' instances over public types are tolerated
      d=$(echo "$s" | c++filt)
      case $d in *mentat::*) ;; *) bad+="$d"$'\n'; continue ;; esac ;;
    *) bad+="$s"$'\n'; continue ;;
  esac
  d=$(echo "$s" | c++filt)
  case $d in
    *StoreImpl*|*mentat::query::*|*mentat::pg::*|*mentat::storage*|*mentat::views*|*mentat::tx::*|*mentat::pull::*|*mentat::sql*|*Sqlite*|*Pg*)
      bad+="$d"$'\n' ;;
  esac
done <<<"$syms"
if [ -n "$bad" ]; then
  echo "check_exports: $LIB exports symbols beyond the public API:" >&2
  printf '%s' "$bad" | head -40 >&2
  exit 1
fi
n_c=$(grep -c '^mentat_' <<<"$syms")
[ "$n_c" -ge 20 ] || { echo "check_exports: only $n_c C API functions exported" >&2; exit 1; }
echo "check_exports: $(wc -l <<<"$syms") symbols, $n_c of the C API, all public"
