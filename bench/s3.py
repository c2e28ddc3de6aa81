"""`s3://bucket/prefix` locations for the Python side of the remote benchmark (remote.py,
peers.py): obstore stores and zarr-python's ObjectStore on them, configured from the AWS
environment variables (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION) and an explicit
endpoint (the S3 server, or the latency proxy in front of it)."""

import os


def is_s3(location):
    return str(location).startswith("s3://")


def split(url):
    """("bucket", "prefix") of s3://bucket/prefix."""
    bucket, _, prefix = url[len("s3://"):].partition("/")
    return bucket, prefix.strip("/")


def region():
    return os.environ.get("AWS_REGION", "us-east-1")


def obstore_store(url, endpoint):
    """An obstore S3Store rooted at the URL's prefix, path-style, plain HTTP allowed."""
    from obstore.store import S3Store

    bucket, prefix = split(url)
    return S3Store(bucket, prefix=prefix or None, endpoint=endpoint, region=region(),
                   access_key_id=os.environ["AWS_ACCESS_KEY_ID"],
                   secret_access_key=os.environ["AWS_SECRET_ACCESS_KEY"],
                   virtual_hosted_style_request=False, client_options={"allow_http": True})


def zarr_store(url, endpoint, read_only=True):
    """zarr-python 3's ObjectStore on obstore_store(url, endpoint)."""
    from zarr.storage import ObjectStore

    return ObjectStore(obstore_store(url, endpoint), read_only=read_only)


def delete_prefix(url, endpoint):
    """Deletes every object under the URL's prefix (a benchmark output)."""
    import obstore

    store = obstore_store(url, endpoint)
    paths = [meta["path"] for batch in obstore.list(store) for meta in batch]
    for start in range(0, len(paths), 1000):
        obstore.delete(store, paths[start:start + 1000])
