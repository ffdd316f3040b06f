# mentat_sees(OUT WHO NAME...): into OUT, the subsystems NAME... and all they declare,
# directly or not (each subsystem's closure is recorded by mentat_subsystem in
# src/CMakeLists.txt); WHO names the caller in the error for a name not declared yet.
function(mentat_sees out who)
  set(all "")
  foreach(name ${ARGN})
    get_property(sees GLOBAL PROPERTY MENTAT_SEES_${name})
    if(NOT sees)
      message(FATAL_ERROR "${who}: ${name} is not a subsystem declared (before it) in "
                          "src/CMakeLists.txt")
    endif()
    list(APPEND all ${sees})
  endforeach()
  list(REMOVE_DUPLICATES all)
  set(${out} ${all} PARENT_SCOPE)
endfunction()

# mentat_include_view(TARGET SUBSYSTEM...): TARGET includes the public API (include/) and
# the headers of the subsystems named and of those they declare (src/CMakeLists.txt),
# nothing else of src/: a folder of links, layers/TARGET/<subsystem> -> src/<subsystem>,
# is its include path.
function(mentat_include_view target)
  mentat_sees(visible ${target} ${ARGN})
  set(view ${CMAKE_BINARY_DIR}/layers/${target})
  file(REMOVE_RECURSE ${view})
  file(MAKE_DIRECTORY ${view})
  foreach(name ${visible})
    file(CREATE_LINK ${CMAKE_SOURCE_DIR}/src/${name} ${view}/${name} SYMBOLIC)
  endforeach()
  target_include_directories(${target} PRIVATE ${CMAKE_SOURCE_DIR}/include ${view})
endfunction()
