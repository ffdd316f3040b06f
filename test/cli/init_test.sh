#!/usr/bin/env bash
# The init file: ~/.mentatrc runs first, -n skips it, --init FILE runs FILE instead, and
# an unreadable --init is an error.
#   init_test.sh MENTAT
set -euo pipefail
MENTAT=$1
HOME=$(mktemp -d)
export HOME
trap 'rm -rf "$HOME"' EXIT
fail() { echo "init_test: $*" >&2; exit 1; }
printf '.format csv\n' >"$HOME/.mentatrc"
printf '.format line\n' >"$HOME/other"
[ "$("$MENTAT" .format)" = csv ] || fail "~/.mentatrc did not run"
[ "$("$MENTAT" -n .format)" = edn ] || fail "-n did not skip ~/.mentatrc"
[ "$("$MENTAT" --no-init .format)" = edn ] || fail "--no-init did not skip ~/.mentatrc"
[ "$("$MENTAT" --init "$HOME/other" .format)" = line ] || fail "--init FILE did not run FILE"
if err=$("$MENTAT" --init "$HOME/missing" .format 2>&1); then fail "a missing --init file passed"; fi
[[ $err == *"cannot read the init file"* ]] || fail "unexpected error: $err"
echo "init_test: ok"
