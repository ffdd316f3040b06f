// The one place that includes SQLite's header.
//
// Built normally, mentat links the system SQLite. Built as part of the SQLite loadable
// extension (MENTAT_SQLITE_EXTENSION defined), every sqlite3_* call goes through the
// host's `sqlite3_api` routine table instead, so the extension never links a second
// SQLite; the extension's entry point sets the table (SQLITE_EXTENSION_INIT2).
#pragma once

#ifdef MENTAT_SQLITE_EXTENSION
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3
#else
#include <sqlite3.h>
#endif
