"""nc-py-api (Nextcloud's own Python client, 0.30.3) against the fake Nextcloud.

Logs in as alice of the demo fixture, once with her app password and once with
her password, and exercises what Tamebi relies on: capabilities, the current
user, listing, stat, download, upload (whole and chunked), search and delete. Prints one line per
check and a last line `nc-py-api: N passed, N failed`; exits 1 on any failure.

    FAKE_URL=http://127.0.0.1:PORT python3 ci/peers/nc_py_api.py
"""

import os
import sys
import warnings
from pathlib import Path

from peer_checks import check, expect, finish

warnings.simplefilter("ignore", DeprecationWarning)
# This file is called nc_py_api.py: keep its own folder off the import path so
# that `import nc_py_api` finds the package, not this script (peer_checks, from
# the same folder, is imported above, before it goes).
sys.path = [entry for entry in sys.path if Path(entry or ".").resolve() != Path(__file__).resolve().parent]

from nc_py_api import Nextcloud, NextcloudException  # noqa: E402

URL = os.environ["FAKE_URL"]
ROOT = Path(__file__).resolve().parents[2]
DEMO_FILES = ROOT / "scenarios" / "fixtures" / "demo" / "files"
CREDENTIALS = [
    ("app password", "alice", "alice-app-Zq7mK-2xP9d-Lw4cH-8tRvN"),
    ("password", "alice", "alice-demo-password"),
]

def expect_missing(nc, path):
    """by_path PROPFINDs with Depth 0; Nextcloud answers 404 for a missing path."""
    try:
        node = nc.files.by_path(path)
    except NextcloudException as error:
        expect(error.status_code == 404, f"{path}: expected 404, got {error.status_code}")
    else:
        raise AssertionError(f"{path} should be missing, got {node!r}")


def run(label, user, secret):
    nc = Nextcloud(nextcloud_url=URL, nc_auth_user=user, nc_auth_pass=secret)

    def capabilities():
        try:
            capabilities = nc.capabilities
        except Exception as error:
            raise AssertionError(
                "GET /ocs/v1.php/cloud/capabilities failed; the fake's OCS (ocs.rs) must answer it "
                f"before nc-py-api can do anything: {error}"
            ) from error
        expect(isinstance(capabilities, dict) and capabilities, f"capabilities: {capabilities!r}")
        expect(nc.srv_version["major"] >= 25, f"version: {nc.srv_version!r}")

    def current_user():
        expect(nc.user == user, f"nc.user = {nc.user!r}")

    def listdir_root():
        names = {node.name: node for node in nc.files.listdir()}
        expect("Documents" in names and names["Documents"].is_dir, f"root listing: {sorted(names)}")
        expect("Projects" in names, f"root listing: {sorted(names)}")
        expect(all(node.file_id and node.info.fileid for node in names.values()), "every node has ids")

    def listdir_documents():
        names = {node.name: node for node in nc.files.listdir("Documents")}
        expect("notes-reunion.md" in names, f"Documents listing: {sorted(names)}")
        node = names["todo.txt"]
        expect(not node.is_dir and node.info.favorite, f"todo.txt is a favorite file: {node!r}")

    def by_path():
        node = nc.files.by_path("Documents/notes-reunion.md")
        expect(node is not None, "Documents/notes-reunion.md exists")
        expect(not node.is_dir, "it is a file")
        expect(node.info.size == (DEMO_FILES / "alice/Documents/notes-reunion.md").stat().st_size, f"size {node.info.size}")
        expect(node.info.mimetype == "text/markdown", f"mimetype {node.info.mimetype}")
        expect(node.etag and node.info.fileid > 0, f"etag/fileid: {node!r}")
        expect("G" in node.info.permissions and "W" in node.info.permissions, f"permissions {node.info.permissions}")
        expect_missing(nc, "Documents/no-such-file.md")

    def download():
        content = nc.files.download("Documents/notes-reunion.md")
        expect(content == (DEMO_FILES / "alice/Documents/notes-reunion.md").read_bytes(), "content matches the fixture")

    folder = f"nc-py-api-check-{label.replace(' ', '-')}"

    def upload_round_trip():
        nc.files.mkdir(folder)
        payload = "Bonjour, réunion à 10 h.\n".encode()
        uploaded = nc.files.upload(f"{folder}/hello world.txt", payload)
        expect(uploaded.file_id, f"upload returned an OC-FileId: {uploaded!r}")
        expect(nc.files.download(f"{folder}/hello world.txt") == payload, "download returns what was uploaded")
        node = nc.files.by_path(f"{folder}/hello world.txt")
        expect(node is not None and node.file_id == uploaded.file_id, f"same file id: {node!r} vs {uploaded!r}")
        expect(node.info.size == len(payload), f"size {node.info.size}")

    def chunked_upload_round_trip():
        # upload_stream sends chunking v2 (Destination on every request,
        # chunks 1, 2, 3) from 5 MiB chunks on, and the older byte-range
        # chunk names below that; both are assembled by the MOVE of .file.
        import io

        for chunk_size, size, name in [(5 * 1024 * 1024, 12 * 1024 * 1024 + 7, "big v2.bin"), (4096, 10_000, "small v1.bin")]:
            payload = bytes((index * 7 + index // 4096) % 251 for index in range(size))
            uploaded = nc.files.upload_stream(f"{folder}/{name}", io.BytesIO(payload), chunk_size=chunk_size)
            expect(uploaded.file_id, f"{name}: the assembling MOVE returned an OC-FileId: {uploaded!r}")
            node = nc.files.by_path(f"{folder}/{name}")
            expect(node is not None and node.file_id == uploaded.file_id, f"{name}: same file id: {node!r} vs {uploaded!r}")
            expect(node.info.size == size, f"{name}: size {node.info.size}, expected {size}")
            expect(nc.files.download(f"{folder}/{name}") == payload, f"{name}: download returns the chunks in order")

    def search():
        found = {node.user_path for node in nc.files.find(["like", "name", "%.md"])}
        expect("Documents/notes-reunion.md" in found, f"SEARCH found: {sorted(found)}")
        expect(not any(path.endswith("todo.txt") for path in found), "only .md files")

    def delete():
        nc.files.delete(f"{folder}/hello world.txt")
        expect_missing(nc, f"{folder}/hello world.txt")
        nc.files.delete(folder)
        expect_missing(nc, folder)

    for name, function in [
        ("capabilities", capabilities),
        ("current user", current_user),
        ("listdir /", listdir_root),
        ("listdir Documents", listdir_documents),
        ("by_path", by_path),
        ("download", download),
        ("upload round trip", upload_round_trip),
        ("chunked upload round trip", chunked_upload_round_trip),
        ("find (SEARCH)", search),
        ("delete", delete),
    ]:
        check(f"[{label}] {name}", function)


def ocs_available():
    """nc-py-api reads OCS capabilities and cloud/user before any WebDAV call;
    say so plainly when the fake lacks them instead of failing every check."""
    import base64
    import urllib.error
    import urllib.request

    _, user, secret = CREDENTIALS[0]
    token = base64.b64encode(f"{user}:{secret}".encode()).decode()
    for path in ["/ocs/v1.php/cloud/capabilities?format=json", "/ocs/v1.php/cloud/user?format=json"]:
        request = urllib.request.Request(
            URL + path, headers={"Authorization": f"Basic {token}", "OCS-APIRequest": "true"}
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                if response.status != 200:
                    raise urllib.error.HTTPError(URL + path, response.status, "", None, None)
        except Exception as error:
            print(f"FAIL OCS {path.split('?')[0]} is not answered by the fake ({error}); nc-py-api needs it")
            return False
    return True


if not ocs_available():
    print("nc-py-api: 0 passed, 1 failed")
    sys.exit(1)

for label, user, secret in CREDENTIALS:
    run(label, user, secret)

finish("nc-py-api")
