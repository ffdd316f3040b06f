#!/usr/bin/env bash
# Installs mentat from BUILD_DIR into a temporary prefix and uses it as a user would:
# a C++ and a C program built through pkg-config, the same through find_package(mentat)
# (shared and static), the CLI, its man page, the SQLite extension and the Python
# package, all from the prefix; and checks what libmentat.so exports.
#
#   test/install/run.sh BUILD_DIR WORK_DIR
set -euo pipefail
BUILD=$(cd "$1" && pwd)
WORK=$2
SRC=$(cd "$(dirname "$0")" && pwd)
rm -rf "$WORK"
mkdir -p "$WORK"
PREFIX=$WORK/prefix
fail() { echo "install test: $*" >&2; exit 1; }
# out_has PATTERN CMD...: a line of CMD's output (stdout and stderr) matches grep's basic
# regular expression PATTERN. The output is captured first: under pipefail,
# "CMD | grep -q" fails at random when grep exits at the first match and CMD is still
# writing (SIGPIPE).
out_has() { local pat=$1 out; shift; out=$("$@" 2>&1) || true; grep -q -- "$pat" <<<"$out"; }

cmake --install "$BUILD" --prefix "$PREFIX" >"$WORK/install.log" || fail "cmake --install failed"
LIBDIR=$(dirname "$(find "$PREFIX" -name 'libmentat.so.*.*' -print -quit)")
[ -n "$LIBDIR" ] || fail "no libmentat.so.<version> installed"
for f in "$LIBDIR/libmentat.so" "$LIBDIR/libmentat.a" "$LIBDIR/pkgconfig/mentat.pc" \
         "$LIBDIR/cmake/mentat/mentatConfig.cmake" "$PREFIX/include/mentat/mentat.h" \
         "$PREFIX/include/mentat/store.h" "$PREFIX/bin/mentat" \
         "$LIBDIR/mentat/libmentat_sqlite.so" "$PREFIX/share/man/man1/mentat.1"; do
  [ -e "$f" ] || fail "$f is not installed"
done
soname=$(objdump -p "$LIBDIR/libmentat.so" | awk '/SONAME/ {print $2}')
[[ $soname =~ ^libmentat\.so\.[0-9]+$ ]] || fail "SONAME is '$soname'"

# Only the public API is exported.
bash "$SRC/check_exports.sh" "$LIBDIR/libmentat.so"

export LD_LIBRARY_PATH=$LIBDIR
export PKG_CONFIG_PATH=$LIBDIR/pkgconfig
cd "$WORK"
# pkg-config: C++ (C++20) and C (C11).
g++ -std=c++20 -o hello_pc_cxx "$SRC/hello.cc" $(pkg-config --cflags --libs mentat)
gcc -std=c11 -Wall -Werror -o hello_pc_c "$SRC/hello.c" $(pkg-config --cflags --libs mentat)
out_has '^c++ people: 2$' ./hello_pc_cxx || fail "pkg-config C++ program: $(./hello_pc_cxx)"
out_has '^c people: \["Ada","Bob"\]$' ./hello_pc_c || fail "pkg-config C program: $(./hello_pc_c)"
out_has "$LIBDIR/libmentat.so" ldd ./hello_pc_c || fail "hello_pc_c does not load the installed library"

# find_package(mentat): shared and static.
cmake -S "$SRC/consumer" -B consumer-build -G Ninja -DCMAKE_PREFIX_PATH="$PREFIX" \
  >consumer-configure.log || { cat consumer-configure.log; fail "find_package(mentat) failed"; }
cmake --build consumer-build >consumer-build.log || { cat consumer-build.log; fail "consumer build failed"; }
out_has '^c++ people: 2$' consumer-build/hello_cxx || fail "find_package C++ program"
out_has '^c people: \["Ada","Bob"\]$' consumer-build/hello_c || fail "find_package C program"
out_has '^c++ people: 2$' env -u LD_LIBRARY_PATH consumer-build/hello_static ||
  fail "find_package static program"
if out_has libmentat ldd consumer-build/hello_static; then fail "hello_static loads libmentat.so"; fi

# The CLI, its man page, the SQLite extension from the prefix.
out_has '^mentat ' "$PREFIX/bin/mentat" --version || fail "installed CLI"
out_has migrate man -l "$PREFIX/share/man/man1/mentat.1" ||
  grep -q 'migrate' "$PREFIX/share/man/man1/mentat.1" || fail "man page lacks migrate"
for opt in --format --read-only --replica .import .export .explain; do
  grep -q -- "$(printf '%s' "$opt" | sed 's/-/\\\\-/g')" "$PREFIX/share/man/man1/mentat.1" ||
    fail "man page lacks $opt"
done
if command -v sqlite3 >/dev/null; then
  out=$(sqlite3 :memory: ".load $LIBDIR/mentat/libmentat_sqlite" \
        "select mentat_q('', '[:find ?x . :in ?x]', '{\"inputs\": [42]}');" 2>&1) || true
  [[ $out == *42* ]] || fail "the installed SQLite extension: $out"
fi

# The Python package, from the prefix.
PYDIR=$(find "$PREFIX" -type d -name dist-packages -print -quit)
if [ -n "$PYDIR" ] && [ -f "$PYDIR/mentat/__init__.py" ]; then
  out_has '^python ok$' env -u LD_LIBRARY_PATH PYTHONPATH="$PYDIR" python3 -c '
import mentat
with mentat.connect("") as c:
    c.transact("[{:db/ident :p/n :db/valueType :db.type/string :db/cardinality :db.cardinality/one}]")
    c.transact([{mentat.Keyword("p/n"): "x"}])
    assert c.q("[:find ?n . :where [_ :p/n ?n]]") == "x"
print("python ok")' || fail "the installed Python package"
else
  fail "the Python package is not installed"
fi
echo "install test: all checks passed ($PREFIX)"
