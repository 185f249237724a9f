# The viewer (soadyn/view.h, issue #13): included by src/CMakeLists.txt, which says what the
# SOADYN_COMPONENT_* lists are. The page code (viewer/src/*.js) and three.js are bundled at build
# time: `npm ci` from viewer/package-lock.json into <build>/viewer (never into the source tree, so
# several build folders do not race), esbuild into one script, viewer/embed.mjs into a generated C
# file compiled into the library. Off (or npm not found), sd_view_write_html says "not offered";
# sd_trajectory_read_csv needs nothing and is always built.
list(APPEND SOADYN_COMPONENT_HEADERS view.h)
list(APPEND SOADYN_COMPONENT_SOURCES view/trajectory_csv.c)
if(SOADYN_WITH_VIEWER)
  if(NOT SOADYN_NPM OR NOT SOADYN_NODE)
    message(FATAL_ERROR "SOADYN_WITH_VIEWER needs node and npm (Debian: apt-get install nodejs npm), "
                        "or configure with -DSOADYN_WITH_VIEWER=OFF")
  endif()
  set(vsrc ${PROJECT_SOURCE_DIR}/viewer)
  set(vdir ${PROJECT_BINARY_DIR}/viewer)
  file(MAKE_DIRECTORY ${vdir})
  file(GLOB viewer_js CONFIGURE_DEPENDS ${vsrc}/src/*.js)
  add_custom_command(OUTPUT ${vdir}/node_modules/.package-lock.json
    COMMAND ${CMAKE_COMMAND} -E copy ${vsrc}/package.json ${vsrc}/package-lock.json ${vdir}
    COMMAND ${SOADYN_NPM} ci --no-audit --no-fund --prefer-offline --loglevel=error
    WORKING_DIRECTORY ${vdir}
    DEPENDS ${vsrc}/package.json ${vsrc}/package-lock.json
    COMMENT "viewer: npm ci (three, esbuild, playwright-core as viewer/package-lock.json pins them)")
  # Legal comments (three.js's MIT licence line) kept, at the end of the script.
  add_custom_command(OUTPUT ${vdir}/view_script.c
    COMMAND ${CMAKE_COMMAND} -E copy_directory ${vsrc}/src ${vdir}/src
    COMMAND ${vdir}/node_modules/.bin/esbuild src/main.js --bundle --minify --format=iife --target=es2020
            --legal-comments=eof --log-level=warning --outfile=dist/viewer.js
    COMMAND ${SOADYN_NODE} ${vsrc}/embed.mjs dist/viewer.js view_script.c
    WORKING_DIRECTORY ${vdir}
    DEPENDS ${vdir}/node_modules/.package-lock.json ${viewer_js} ${vsrc}/embed.mjs
    COMMENT "viewer: bundling viewer/src and three.js into view_script.c")
  list(APPEND SOADYN_COMPONENT_SOURCES view/view_page.c view/view_mesh.c ${vdir}/view_script.c)
  if(SOADYN_WITH_IO)
    list(APPEND SOADYN_COMPONENT_SOURCES view/view_visuals.c)
  else()
    list(APPEND SOADYN_COMPONENT_SOURCES view/view_visuals_none.c)
  endif()
  # where the browser test finds playwright-core
  set(SOADYN_VIEWER_NODE_MODULES ${vdir}/node_modules CACHE INTERNAL "node_modules of the viewer build")
else()
  list(APPEND SOADYN_COMPONENT_SOURCES view/view_not_built.c)
endif()
