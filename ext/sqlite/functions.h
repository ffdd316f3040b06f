// The extension's scalar SQL functions and its table-valued edn_rows, for registration by
// the entry point (extension.cc).
#pragma once

#include "storage/sqlite_api.h"

namespace mentat::sqlite_ext {

struct FunctionSpec {
  const char* name;  // nullptr ends kFunctions
  int min_args;
  int max_args;
  void (*fn)(sqlite3_context*, int, sqlite3_value**);
};

// Every scalar function; each is registered for every arity min_args..max_args, with the
// connection's HostContext as user data.
extern const FunctionSpec kFunctions[];

// The edn_rows module (rows_vtab.cc): eponymous table-valued function and CREATE VIRTUAL
// TABLE ... USING edn_rows(...).
extern const sqlite3_module kRowsModule;

// mentat_close_hook (close_hook.cc): an eponymous table whose xDisconnect, run when the
// host connection closes, drops the connection's host-mode store.
extern const sqlite3_module kCloseHookModule;

}  // namespace mentat::sqlite_ext
