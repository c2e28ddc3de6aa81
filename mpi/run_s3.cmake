# Runs mpi/test_mpi.c (PROGRAM) on RANKS ranks under MPIEXEC against the test S3 server that
# scripts/servers.sh starts, where each collective write's PUTs must number the chunks and
# shards it touches. Without the servers the test is skipped, unless
# LIBZARR_REMOTE_TESTS=required.
if(NOT DEFINED ENV{LIBZARR_TEST_S3_ENDPOINT})
  if("$ENV{LIBZARR_REMOTE_TESTS}" STREQUAL "required")
    message(FATAL_ERROR "LIBZARR_TEST_S3_ENDPOINT is not set: start the servers (scripts/servers.sh)")
  endif()
  message("skipped: no test servers (scripts/test.sh starts them)")
  return()
endif()

# The store takes its settings from the environment, as the AWS tools do.
set(ENV{AWS_ENDPOINT_URL} "$ENV{LIBZARR_TEST_S3_ENDPOINT}")
set(ENV{AWS_ACCESS_KEY_ID} "$ENV{LIBZARR_TEST_S3_KEY}")
set(ENV{AWS_SECRET_ACCESS_KEY} "$ENV{LIBZARR_TEST_S3_SECRET}")
set(ENV{AWS_REGION} "us-east-1")
string(RANDOM LENGTH 12 ALPHABET 0123456789abcdef tag)
execute_process(COMMAND ${MPIEXEC} ${NUMPROC_FLAG} ${RANKS} "${PROGRAM}"
  "s3://zarr-test/mpi-${tag}.zarr" RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${MPIEXEC} ${NUMPROC_FLAG} ${RANKS} ${PROGRAM} s3://zarr-test/mpi-${tag}.zarr failed (${status})")
endif()
