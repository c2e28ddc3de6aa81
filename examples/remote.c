/* remote.c - reading Zarr from object storage or a web server, and uploading a store.
 *
 *   zarr_remote URL [LOCAL_STORE]
 *
 * With LOCAL_STORE (such as the demo's demo.zarr), first uploads it to URL (an s3://, gs:// or
 * az:// location) with zarr_store_copy, many transfers in flight, printing the progress. Then
 * opens URL read-only (s3://bucket/prefix, or http(s):// for a web server), lists the root
 * group through its consolidated metadata (one request; web servers cannot list), reads a
 * 4 x 3 box of measurements/temperature and prints it with the HTTP requests it took.
 *
 * S3 settings come from the environment as the AWS tools read it: AWS_ACCESS_KEY_ID,
 * AWS_SECRET_ACCESS_KEY, AWS_REGION and, for a server other than AWS, AWS_ENDPOINT_URL
 * (http://127.0.0.1:8333, say: path-style requests, plain HTTP allowed); or AWS_PROFILE.
 *
 *   AWS_ENDPOINT_URL=http://127.0.0.1:8333 ./zarr_remote s3://bucket/demo.zarr demo.zarr
 *   ./zarr_remote http://127.0.0.1:8080/demo.zarr
 */
#include <inttypes.h>
#include <stdio.h>

#include "zarr.h"

/* Reports a failed call with the library's message; returns 1 if the call succeeded. */
static int ok(zarr_status status, const char *what) {
    if (status != ZARR_OK)
        fprintf(stderr, "%s failed: %s: %s\n", what, zarr_status_name(status), zarr_last_error());
    return status == ZARR_OK;
}

/* Prints the upload's progress; returning nonzero would cancel it. */
static int32_t show_progress(const zarr_progress *p, void *user_data) {
    (void)user_data;
    printf("\ruploaded %" PRIu64 " of %" PRIu64 " keys", p->items_done, p->items_total);
    if (p->items_done == p->items_total) printf("\n");
    fflush(stdout);
    return 0;
}

static int upload(const char *local, const char *url) {
    zarr_store *src = NULL, *dst = NULL;
    int good = ok(zarr_store_open(local, ZARR_MODE_READ, &src), "open the local store") &&
               ok(zarr_store_open(url, ZARR_MODE_WRITE, &dst), "open the bucket") &&
               ok(zarr_store_copy(src, "", dst, "", show_progress, NULL), "upload");
    zarr_store_close(src);
    return ok(zarr_store_close(dst), "close the bucket") && good;
}

int main(int argc, char **argv) {
    zarr_store *store = NULL;
    zarr_group *root = NULL;
    zarr_array *temperature = NULL;
    zarr_request_stats before, after;
    char *members = NULL;
    double box[4][3];
    uint64_t start[2] = {898, 500}, count[2] = {4, 3};
    int good = 0;

    if (argc < 2) {
        fprintf(stderr, "usage: %s URL [LOCAL_STORE]\n", argv[0]);
        return 2;
    }
    if (argc > 2 && !upload(argv[2], argv[1])) return 1;

    /* Opening reads the consolidated metadata: every later metadata lookup is answered
       from it, without a request. */
    if (!ok(zarr_store_open(argv[1], ZARR_MODE_READ, &store), "open") ||
        !ok(zarr_store_request_stats(store, &before), "request statistics") ||
        !ok(zarr_group_open(store, "", &root), "open the root group") ||
        !ok(zarr_group_list(root, &members), "list the root group") ||
        !ok(zarr_array_open(store, "measurements/temperature", &temperature), "open the array") ||
        !ok(zarr_array_read(temperature, 2, start, count, box, sizeof box), "read") ||
        !ok(zarr_store_request_stats(store, &after), "request statistics"))
        goto done;

    printf("%s holds %s\n", argv[1], members);
    for (int i = 0; i < 4; i++)
        printf("row %" PRIu64 ": %.3f %.3f %.3f\n", start[0] + i, box[i][0], box[i][1], box[i][2]);
    printf("the group, the array and the box took %" PRIu64 " requests (%" PRIu64
           " bytes received)\n",
           after.requests - before.requests, after.bytes_received - before.bytes_received);
    /* Rows 0..899 were written by the demo; row 900 on is the fill value, NaN. */
    good = box[0][0] == box[0][0] && box[3][0] != box[3][0];
    if (!good) fprintf(stderr, "unexpected values: the demo's rows 898-899 and NaN after\n");

done:
    zarr_string_free(members);
    zarr_array_close(temperature);
    zarr_group_close(root);
    zarr_store_close(store);
    return good ? 0 : 1;
}
