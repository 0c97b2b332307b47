#!/usr/bin/env python3
"""Runs compose.fake.yaml's services without Docker, and asks a question.

    python3 ci/compose/smoke_fake.py target/debug/tamebi

There is no Docker engine where this stack was written, so this is the
nearest thing to `docker compose -f compose.fake.yaml up`: each service's
`command:` and `environment:` exactly as the file gives them, the built
binary instead of the image, inside a private network namespace (only
`lo`, so the stack's fixed ports clash with nothing) whose /etc/hosts maps
every service name to 127.0.0.1, the way Compose's DNS would. Named volumes
become temporary directories and bind mounts the repository's folders.
Each service must pass its own healthcheck (deploy/healthcheck.sh, as in the
image), the one-shot `webhooks` must exit 0, and then `tamebi ask` puts a
question to http://localhost:8080 (the published address) and must get an
answer through the fake app, the orchestrator, mcp-nextcloud and the model.

What it cannot check: the image build, Docker networking and volume
ownership. Needs root (or user namespaces) for `unshare` and iproute2's `ip`;
without them it fails, saying so (`.ci/run` installs iproute2).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import check  # noqa: E402

ROOT = check.ROOT
INSIDE = "TAMEBI_SMOKE_INSIDE_NAMESPACE"


def reexec_in_namespace(binary: str) -> int:
    services = check.load("compose.fake.yaml")["services"]
    hosts = "127.0.0.1 localhost " + " ".join(services) + "\n::1 localhost\n"
    with tempfile.NamedTemporaryFile("w", suffix=".hosts", delete=False) as handle:
        handle.write(hosts)
    script = (
        "set -e; ip link set lo up; mount --bind \"$1\" /etc/hosts; shift; exec \"$@\""
    )
    env = dict(os.environ, **{INSIDE: "1"})
    try:
        probe = subprocess.run(["unshare", "-mn", "true"], capture_output=True)
        if probe.returncode != 0 or shutil.which("ip") is None:
            print(
                "FAILED: this check needs a private network namespace (run as root with "
                "util-linux's unshare and iproute2's ip: apt-get install iproute2): "
                + (probe.stderr.decode().strip() or "no ip command")
            )
            return 1
        result = subprocess.run(
            ["unshare", "-mn", "sh", "-c", script, "sh", handle.name, sys.executable, __file__, binary],
            env=env,
        )
        return result.returncode
    finally:
        os.unlink(handle.name)


def order(services: dict) -> list[str]:
    done: list[str] = []
    while len(done) < len(services):
        for name, service in services.items():
            deps = set((service or {}).get("depends_on") or {})
            if name not in done and deps <= set(done):
                done.append(name)
    return done


def main() -> int:
    binary = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else ""
    if not binary or not os.access(binary, os.X_OK):
        print("usage: smoke_fake.py target/debug/tamebi (build it first)")
        return 2
    if os.environ.get(INSIDE) != "1":
        return reexec_in_namespace(binary)

    doc = check.load("compose.fake.yaml")
    services = doc["services"]
    work = Path(tempfile.mkdtemp(prefix="tamebi-compose-smoke-"))
    processes: dict[str, subprocess.Popen] = {}
    failures: list[str] = []

    def log(name: str) -> str:
        path = work / f"{name}.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""

    try:
        for name in order(services):
            service = services[name]
            mounts = {}
            for source, target in check.volume_mounts(service):
                if check.named(source):
                    (work / "volumes" / source).mkdir(parents=True, exist_ok=True)
                    mounts[target] = str(work / "volumes" / source)
                else:
                    mounts[target] = str((ROOT / source).resolve())
            tokens = []
            for token in check.command_tokens(service):
                for target, real in mounts.items():
                    token = token.replace(target, real)
                tokens.append(token)
            env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "RUST_LOG": "info,rmcp=warn"}
            for key, value in check.environment(service).items():
                if value is not None:
                    for target, real in mounts.items():
                        value = value.replace(target, real)
                    env[key] = value
            out = open(work / f"{name}.log", "w")
            processes[name] = subprocess.Popen([binary, *tokens], stdout=out, stderr=out, env=env, cwd=work)
            print(f"started {name}: tamebi {' '.join(tokens[:2])} …")
            if name in check.ONE_SHOT:
                try:
                    code = processes[name].wait(timeout=60)
                except subprocess.TimeoutExpired:
                    code = None
                if code != 0:
                    failures.append(f"{name} exited {code}:\n{log(name)}")
                else:
                    print(f"  {name} done: {log(name).strip().splitlines()[-1]}")
                continue
            test = [str(t) for t in (service.get("healthcheck") or {}).get("test", [])]
            port, path = test[2], test[3]
            for _ in range(600):
                if processes[name].poll() is not None:
                    break
                probe = subprocess.run(
                    ["bash", str(ROOT / "deploy/healthcheck.sh"), port, path], capture_output=True
                )
                if probe.returncode == 0:
                    print(f"  {name} healthy (GET {path} on {port})")
                    break
                time.sleep(0.2)
            else:
                failures.append(f"{name} never became healthy:\n{log(name)}")
            if processes[name].poll() is not None:
                failures.append(f"{name} exited {processes[name].returncode}:\n{log(name)}")
            if failures:
                break

        if not failures:
            index_db = work / "volumes" / "index" / "index.db"
            for attempt in (1, 2):
                question = "Quel est le budget prévisionnel d'Apollo ?"
                ask = subprocess.run(
                    [binary, "ask", "--url", "http://localhost:8080", question],
                    capture_output=True, text=True, timeout=120, cwd=work,
                    env={"PATH": os.environ.get("PATH", "")},
                )
                print(f"tamebi ask {question!r} through http://localhost:8080 (exit {ask.returncode}):")
                print("  " + "\n  ".join((ask.stdout.strip() or ask.stderr.strip()).splitlines()[-12:]))
                if ask.returncode != 0 or "files_grep" not in ask.stdout:
                    failures.append(f"tamebi ask failed:\n{ask.stdout}\n{ask.stderr}\n--- orchestrator:\n{log('orchestrator')}\n--- mcp-nextcloud:\n{log('mcp-nextcloud')}")
                    break
                if attempt == 2:
                    # A quoted passage with the document it comes from.
                    if "«" not in ask.stdout or "Documents/" not in ask.stdout:
                        failures.append(f"the second answer quotes no passage:\n{ask.stdout}")
                    break
                # The first search starts the index's reading pass: watch it
                # the way docs/compose.md says to, then ask again.
                watch = subprocess.run(
                    [binary, "index", "status", "--index-db", str(index_db), "--watch",
                     "--interval", "1", "--until-idle"],
                    capture_output=True, text=True, timeout=120, cwd=work,
                )
                lines = watch.stdout.strip().splitlines()
                print(f"tamebi index status --watch --until-idle (exit {watch.returncode}): {lines[-1] if lines else watch.stderr.strip()}")
                if watch.returncode != 0:
                    failures.append(f"index status failed: {watch.stderr}")
                    break
    finally:
        for process in processes.values():
            if process.poll() is None:
                process.terminate()
        for process in processes.values():
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
        shutil.rmtree(work, ignore_errors=True)

    for failure in failures:
        print(f"FAILED: {failure}")
    print(f"compose.fake.yaml smoke: {'ok' if not failures else 'FAILED'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
