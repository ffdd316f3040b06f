# What `cmake --install` (and `make install PREFIX=...`) installs, and the Debian package
# (`make package`, CPack DEB). doc/install.md describes the result.
#
#   lib/libmentat.so.<version> (SONAME libmentat.so.<major>), libmentat.so, libmentat.a
#   include/mentat/*.h
#   lib/pkgconfig/mentat.pc                      pkg-config: -lmentat (--static: its deps)
#   lib/cmake/mentat/mentatConfig*.cmake         find_package(mentat): mentat::mentat (shared)
#                                                and mentat::mentat_static
#   bin/mentat                                   the CLI
#   lib/mentat/libmentat_sqlite.so               the SQLite loadable extension
#   lib/mentat/mentat.duckdb_extension           the DuckDB extension (MENTAT_DUCKDB=ON)
#   share/man/man1/mentat.1                      the CLI's man page (from `mentat --help`)
#   lib/python3/dist-packages/mentat/            the Python package (python/mentat)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(MENTAT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/mentat)
set(MENTAT_PKGCONFIG_DIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

install(TARGETS mentat_shared mentat_core EXPORT mentatTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
set_target_properties(mentat_core PROPERTIES EXPORT_NAME mentat_static)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/include/mentat DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")
install(EXPORT mentatTargets NAMESPACE mentat:: DESTINATION ${MENTAT_CMAKE_DIR})
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/mentatConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/mentatConfig.cmake
                              INSTALL_DESTINATION ${MENTAT_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/mentatConfigVersion.cmake
                                 COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/mentatConfig.cmake ${CMAKE_BINARY_DIR}/mentatConfigVersion.cmake
        DESTINATION ${MENTAT_CMAKE_DIR})

# mentat.pc finds its prefix from where it is installed (${pcfiledir}), so the same file
# works under any --prefix.
file(RELATIVE_PATH MENTAT_PC_TO_PREFIX /prefix/${MENTAT_PKGCONFIG_DIR} /prefix)
string(REGEX REPLACE "/$" "" MENTAT_PC_TO_PREFIX "${MENTAT_PC_TO_PREFIX}")
configure_file(${CMAKE_SOURCE_DIR}/cmake/mentat.pc.in ${CMAKE_BINARY_DIR}/mentat.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/mentat.pc DESTINATION ${MENTAT_PKGCONFIG_DIR})

install(TARGETS mentat_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS mentat_sqlite LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/mentat)
if(TARGET mentat_duckdb_extension)
  install(FILES ${MENTAT_DUCKDB_EXTENSION_FILE} DESTINATION ${CMAKE_INSTALL_LIBDIR}/mentat)
endif()

# The man page, written from the CLI's own --help at build time, so it lists what the
# binary does.
find_package(Python3 COMPONENTS Interpreter REQUIRED)
set(MENTAT_MAN_PAGE ${CMAKE_BINARY_DIR}/mentat.1)
add_custom_command(OUTPUT ${MENTAT_MAN_PAGE}
                   COMMAND Python3::Interpreter ${CMAKE_SOURCE_DIR}/tools/manpage.py
                           $<TARGET_FILE:mentat_cli> ${PROJECT_VERSION} ${MENTAT_MAN_PAGE}
                   DEPENDS mentat_cli ${CMAKE_SOURCE_DIR}/tools/manpage.py
                   COMMENT "Writing the man page mentat.1")
add_custom_target(mentat_man ALL DEPENDS ${MENTAT_MAN_PAGE})
install(FILES ${MENTAT_MAN_PAGE} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)

# The Python package: standard library only, over libmentat.so (ctypes).
set(MENTAT_PYTHON_DIR "lib/python3/dist-packages" CACHE STRING
    "Where the Python package is installed, under the prefix")
install(DIRECTORY ${CMAKE_SOURCE_DIR}/python/mentat DESTINATION ${MENTAT_PYTHON_DIR}
        PATTERN "__pycache__" EXCLUDE PATTERN "*_test.py" EXCLUDE PATTERN "tests" EXCLUDE)
# Debian's /usr/bin/python3 reads /usr/local/lib/python3.X/dist-packages (not
# lib/python3/dist-packages) for prefixes other than /usr: a copy there makes
# `import mentat` work after `make install` into /usr/local without PYTHONPATH.
if(NOT CMAKE_INSTALL_PREFIX STREQUAL "/usr" AND EXISTS /usr/bin/python3)
  execute_process(COMMAND /usr/bin/python3 -c "import sys; print('%d.%d' % sys.version_info[:2])"
                  OUTPUT_VARIABLE MENTAT_DEBIAN_PYTHON OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE MENTAT_DEBIAN_PYTHON_RC)
  if(MENTAT_DEBIAN_PYTHON_RC EQUAL 0 AND MENTAT_DEBIAN_PYTHON MATCHES "^3\\.[0-9]+$")
    install(DIRECTORY ${CMAKE_SOURCE_DIR}/python/mentat
            DESTINATION lib/python${MENTAT_DEBIAN_PYTHON}/dist-packages
            PATTERN "__pycache__" EXCLUDE PATTERN "tests" EXCLUDE)
  endif()
endif()

# make package: a Debian package of the above.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME mentat)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "mentat developers <mentat@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Embedded Datomic-style database: datoms in SQLite or PostgreSQL, queried with Datalog")
set(CPACK_DEBIAN_PACKAGE_SECTION database)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# The libraries libmentat.so links (what dpkg-shlibdeps would find), and what the
# development files need.
set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "libc6, libstdc++6, libsqlite3-0, libpq5, libre2-9, libicu72, libreadline8, libcpp-httplib0.11, python3")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "sqlite3, libsqlite3-dev, libpq-dev, libre2-dev, libicu-dev")
include(CPack)
