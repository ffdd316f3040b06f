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

cmake --install "$BUILD" --prefix "$PREFIX" >"$WORK/install.log" || fail "cmake --install failed"
LIBDIR=$(dirname "$(find "$PREFIX" -name 'libmentat.so.*.*' | head -1)")
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
./hello_pc_cxx | grep -qx 'c++ people: 2' || fail "pkg-config C++ program: $(./hello_pc_cxx)"
./hello_pc_c | grep -qx 'c people: \["Ada","Bob"\]' || fail "pkg-config C program: $(./hello_pc_c)"
ldd ./hello_pc_c | grep -q "$LIBDIR/libmentat.so" || fail "hello_pc_c does not load the installed library"

# find_package(mentat): shared and static.
cmake -S "$SRC/consumer" -B consumer-build -G Ninja -DCMAKE_PREFIX_PATH="$PREFIX" \
  >consumer-configure.log || { cat consumer-configure.log; fail "find_package(mentat) failed"; }
cmake --build consumer-build >consumer-build.log || { cat consumer-build.log; fail "consumer build failed"; }
consumer-build/hello_cxx | grep -qx 'c++ people: 2' || fail "find_package C++ program"
consumer-build/hello_c | grep -qx 'c people: \["Ada","Bob"\]' || fail "find_package C program"
env -u LD_LIBRARY_PATH consumer-build/hello_static | grep -qx 'c++ people: 2' ||
  fail "find_package static program"
if ldd consumer-build/hello_static | grep -q libmentat; then fail "hello_static loads libmentat.so"; fi

# The CLI, its man page, the SQLite extension from the prefix.
"$PREFIX/bin/mentat" --version | grep -q '^mentat ' || fail "installed CLI"
man -l "$PREFIX/share/man/man1/mentat.1" 2>/dev/null | grep -q 'migrate' ||
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
PYDIR=$(find "$PREFIX" -type d -name dist-packages | head -1)
if [ -n "$PYDIR" ] && [ -f "$PYDIR/mentat/__init__.py" ]; then
  env -u LD_LIBRARY_PATH PYTHONPATH="$PYDIR" python3 -c '
import mentat
with mentat.connect("") as c:
    c.transact("[{:db/ident :p/n :db/valueType :db.type/string :db/cardinality :db.cardinality/one}]")
    c.transact([{mentat.Keyword("p/n"): "x"}])
    assert c.q("[:find ?n . :where [_ :p/n ?n]]") == "x"
print("python ok")' | grep -qx 'python ok' || fail "the installed Python package"
else
  fail "the Python package is not installed"
fi
echo "install test: all checks passed ($PREFIX)"
