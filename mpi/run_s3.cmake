# Runs mpi/test_mpi.c (PROGRAM) on RANKS ranks under MPIEXEC against the test S3 server that
# scripts/servers.sh starts, where each collective write's PUTs must number the chunks and
# shards it touches. Without the servers the test is skipped, unless
# LIBZARR_REMOTE_TESTS=required.
include("${CMAKE_CURRENT_LIST_DIR}/../cmake/test_servers.cmake")
if(NOT TEST_SERVERS)
  return()
endif()
execute_process(COMMAND ${MPIEXEC} ${NUMPROC_FLAG} ${RANKS} "${PROGRAM}"
  "s3://zarr-test/mpi-${tag}.zarr" RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${MPIEXEC} ${NUMPROC_FLAG} ${RANKS} ${PROGRAM} s3://zarr-test/mpi-${tag}.zarr failed (${status})")
endif()
