# Runs examples/remote.c (PROGRAM) against the test servers scripts/servers.sh starts: uploads
# the demo's store (DEMO_STORE) to the S3 bucket and reads it back, then reads it from the web
# server. Without the servers the test is skipped, unless LIBZARR_REMOTE_TESTS=required.
# LAUNCHER (optional, a list) is a command the program runs under, e.g. valgrind.
if(NOT DEFINED ENV{LIBZARR_TEST_S3_ENDPOINT})
  if("$ENV{LIBZARR_REMOTE_TESTS}" STREQUAL "required")
    message(FATAL_ERROR "LIBZARR_TEST_S3_ENDPOINT is not set: start the servers (scripts/servers.sh)")
  endif()
  message("skipped: no test servers (scripts/test.sh starts them)")
  return()
endif()

# The example reads its settings from the environment, as the AWS tools do.
set(ENV{AWS_ENDPOINT_URL} "$ENV{LIBZARR_TEST_S3_ENDPOINT}")
set(ENV{AWS_ACCESS_KEY_ID} "$ENV{LIBZARR_TEST_S3_KEY}")
set(ENV{AWS_SECRET_ACCESS_KEY} "$ENV{LIBZARR_TEST_S3_SECRET}")
set(ENV{AWS_REGION} "us-east-1")
string(RANDOM LENGTH 12 ALPHABET 0123456789abcdef tag)

function(run_example)
  execute_process(COMMAND ${LAUNCHER} "${PROGRAM}" ${ARGV} RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${PROGRAM} ${ARGV} failed (${status})")
  endif()
endfunction()

run_example("s3://zarr-test/remote-example-${tag}.zarr" "${DEMO_STORE}")
file(COPY "${DEMO_STORE}/" DESTINATION "$ENV{LIBZARR_TEST_HTTP_ROOT}/remote-example-${tag}.zarr")
run_example("$ENV{LIBZARR_TEST_HTTP_URL}/remote-example-${tag}.zarr")
