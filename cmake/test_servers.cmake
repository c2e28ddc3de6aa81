# Included by the CTest scripts that need the test servers scripts/servers.sh starts
# (examples/run_remote.cmake, mpi/run_s3.cmake). Sets TEST_SERVERS: FALSE, after printing the
# word CTest skips on, when they are not running (an error when LIBZARR_REMOTE_TESTS=required);
# TRUE when they are, with the AWS_* settings the stores take from the environment, as the AWS
# tools do, and `tag`, a random name part that keeps runs apart in the bucket.
set(TEST_SERVERS FALSE)
if(NOT DEFINED ENV{LIBZARR_TEST_S3_ENDPOINT})
  if("$ENV{LIBZARR_REMOTE_TESTS}" STREQUAL "required")
    message(FATAL_ERROR "LIBZARR_TEST_S3_ENDPOINT is not set: start the servers (scripts/servers.sh)")
  endif()
  message("skipped: no test servers (scripts/test.sh starts them)")
  return()
endif()
set(TEST_SERVERS TRUE)
set(ENV{AWS_ENDPOINT_URL} "$ENV{LIBZARR_TEST_S3_ENDPOINT}")
set(ENV{AWS_ACCESS_KEY_ID} "$ENV{LIBZARR_TEST_S3_KEY}")
set(ENV{AWS_SECRET_ACCESS_KEY} "$ENV{LIBZARR_TEST_S3_SECRET}")
set(ENV{AWS_REGION} "us-east-1")
string(RANDOM LENGTH 12 ALPHABET 0123456789abcdef tag)
