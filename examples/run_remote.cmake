# Runs examples/remote.c (PROGRAM) against the test servers scripts/servers.sh starts: uploads
# the demo's store (DEMO_STORE) to the S3 bucket and reads it back, then reads it from the web
# server. Without the servers the test is skipped, unless LIBZARR_REMOTE_TESTS=required.
# LAUNCHER (optional, a list) is a command the program runs under, e.g. valgrind.
include("${CMAKE_CURRENT_LIST_DIR}/../cmake/test_servers.cmake")
if(NOT TEST_SERVERS)
  return()
endif()

function(run_example)
  execute_process(COMMAND ${LAUNCHER} "${PROGRAM}" ${ARGV} RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${PROGRAM} ${ARGV} failed (${status})")
  endif()
endfunction()

run_example("s3://zarr-test/remote-example-${tag}.zarr" "${DEMO_STORE}")
file(COPY "${DEMO_STORE}/" DESTINATION "$ENV{LIBZARR_TEST_HTTP_ROOT}/remote-example-${tag}.zarr")
run_example("$ENV{LIBZARR_TEST_HTTP_URL}/remote-example-${tag}.zarr")
