#!/usr/bin/env python3
"""Structural checks of the Compose files, with no Docker engine.

    python3 ci/compose/check.py target/debug/tamebi            # check both files
    python3 ci/compose/check.py target/debug/tamebi --self-test # and prove it fails on broken copies
    python3 ci/compose/check.py --write-fixture                 # regenerate scenarios/fixtures/compose.toml

What it checks (docs/compose.md, "What CI checks"):
- the expected services are there; every service has a restart policy, and
  every long-running one a healthcheck; third-party images are pinned;
- every `command:` of a service built from this repository (and every
  `tamebi-cli` call in deploy/setup.sh) names a subcommand and only flags
  that `tamebi <sub> --help` lists;
- every environment variable those services get (inline or from an env
  file's committed example) is one the binary reads (`[env: X]` in the
  help); in compose.yaml a secret (an env value the help hides) never sits
  inline nor in a flag: env files only;
- ports are well-formed and do not clash; the listen port, the healthcheck
  and expose/ports agree; named volumes are declared and used;
- the invariants: the index volume is mounted on mcp-nextcloud only and
  --index-db lives in it; the orchestrator has no Nextcloud URL, credential
  or index volume, holds its data dir on its own volume and is not
  published; the model key reaches the orchestrator only;
- the URL pairs: the orchestrator's --mcp URLs are the MCP servers' canonical
  URLs on their listen ports and their hosts are --allowed-host; --issuer is
  Nextcloud's public URL (overwrite* / the fixture's overwritehost), never
  the internal one;
- env_file entries are deploy/X.env with a committed deploy/X.env.example
  and X.env git-ignored;
- the Dockerfile copies every crate's manifest and runs as a non-root user;
- scenarios/fixtures/compose.toml is demo.toml with the stack's URLs.
"""

from __future__ import annotations

import argparse
import copy
import fnmatch
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]

EXPECTED = {
    "compose.yaml": {
        "nextcloud", "cron", "db", "redis", "onlyoffice",
        "orchestrator", "mcp-nextcloud", "mcp-mail", "tamebi-cli",
    },
    "compose.fake.yaml": {
        "fake-nextcloud", "fake-model", "orchestrator", "mcp-nextcloud", "mcp-mail", "webhooks",
    },
}
# Services that run once and exit: no healthcheck expected.
ONE_SHOT = {"tamebi-cli", "webhooks"}
# Read by the binary outside clap: tracing's EnvFilter (main.rs).
EXTRA_ENV = {"RUST_LOG"}
# What the orchestrator must never be given: a way to Nextcloud or its data.
ORCHESTRATOR_FORBIDDEN_ENV = re.compile(
    r"NEXTCLOUD|^TAMEBI_OIDC_|^TAMEBI_WEBHOOK_|^ONLYOFFICE_|^TAMEBI_INDEX_DB$|^TAMEBI_DOCTOR_|^TAMEBI_UPSTREAM_AUTH$"
)
# The model key and the app's shared secret: the orchestrator's alone among the services.
MODEL_SECRETS = {"TAMEBI_MODEL_API_KEY", "TAMEBI_SHARED_SECRET"}


# ---- the binary's own description of itself ---------------------------------------------


class Cli:
    """`tamebi <sub> --help`, parsed: subcommands, flags, env variables."""

    def __init__(self, binary: str):
        self.binary = binary
        self.cache: dict[tuple[str, ...], str] = {}

    def help(self, path: tuple[str, ...]) -> str:
        if path not in self.cache:
            # A clean environment: no value of ours shows in `[env: X=value]`.
            env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "COLUMNS": "1000"}
            result = subprocess.run(
                [self.binary, *path, "--help"], capture_output=True, text=True, env=env, timeout=60
            )
            self.cache[path] = result.stdout if result.returncode == 0 else ""
        return self.cache[path]

    def subcommands(self, path: tuple[str, ...]) -> set[str]:
        text = self.help(path)
        match = re.search(r"^Commands:\n((?:  .*\n)+)", text, re.M)
        if not match:
            return set()
        names = {line.split()[0] for line in match.group(1).splitlines() if line.strip()}
        return names - {"help"}

    def resolve(self, tokens: list[str]) -> tuple[tuple[str, ...], list[str]] | None:
        """The subcommand path at the start of tokens, and the rest."""
        path: tuple[str, ...] = ()
        rest = list(tokens)
        while rest and rest[0] in self.subcommands(path):
            path += (rest.pop(0),)
        if not path or self.subcommands(path):
            return None
        return path, rest

    def options(self, path: tuple[str, ...]) -> dict[str, dict]:
        """flag name (and aliases) -> {value: bool, env: str|None, secret: bool}."""
        text = self.help(path)
        options: dict[str, dict] = {}
        blocks = re.split(r"\n(?=\s+(?:-\w, )?--[a-z])", text)
        for block in blocks:
            head = re.match(r"\s+(?:-\w, )?--([a-z0-9-]+)(?: <[A-Z_]+>)?", block)
            if not head:
                continue
            env = re.search(r"\[env: ([A-Z0-9_]+)(=?)", block)
            option = {
                "value": bool(re.match(r"\s+(?:-\w, )?--[a-z0-9-]+ <", block)),
                "env": env.group(1) if env else None,
                # clap prints `[env: X=]` unless the value is hidden (secrets).
                "secret": bool(env and env.group(2) == ""),
            }
            options[head.group(1)] = option
            for alias in re.findall(r"alias(?:es)?: ((?:--[a-z0-9-]+(?:, )?)+)", block):
                for name in re.findall(r"--([a-z0-9-]+)", alias):
                    options[name] = option
        options.pop("help", None)
        return options

    def env(self, path: tuple[str, ...]) -> dict[str, bool]:
        """env variable -> secret."""
        return {o["env"]: o["secret"] for o in self.options(path).values() if o["env"]}


# ---- helpers -------------------------------------------------------------------------------

INTERPOLATION = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}")


def interpolate(value: str) -> str:
    """Compose interpolation with the files' defaults (`$$` is a literal `$`)."""
    value = value.replace("$$", "\0")
    value = INTERPOLATION.sub(lambda m: m.group(2) if m.group(2) is not None else "", value)
    return value.replace("\0", "$")


def as_list(value) -> list:
    if value is None:
        return []
    if isinstance(value, (str, dict)):
        return [value]
    return list(value)


def command_tokens(service: dict) -> list[str]:
    command = service.get("command")
    if command is None:
        return []
    if isinstance(command, str):
        return shlex.split(interpolate(command))
    return [interpolate(str(token)) for token in command]


def environment(service: dict) -> dict[str, str | None]:
    env = service.get("environment") or {}
    if isinstance(env, list):
        out: dict[str, str | None] = {}
        for item in env:
            key, _, value = str(item).partition("=")
            out[key] = value if "=" in str(item) else None
        return out
    return {k: (None if v is None else interpolate(str(v))) for k, v in env.items()}


def env_file_vars(path: Path) -> list[str]:
    if not path.exists():
        return []
    names = []
    for line in path.read_text().splitlines():
        match = re.match(r"^([A-Za-z_][A-Za-z0-9_]*)=", line)
        if match:
            names.append(match.group(1))
    return names


def volume_mounts(service: dict) -> list[tuple[str, str]]:
    """(source, target) of each mount."""
    mounts = []
    for volume in as_list(service.get("volumes")):
        if isinstance(volume, dict):
            mounts.append((str(volume.get("source", "")), str(volume.get("target", ""))))
        else:
            parts = interpolate(str(volume)).split(":")
            mounts.append((parts[0], parts[1] if len(parts) > 1 else parts[0]))
    return mounts


def named(source: str) -> bool:
    return bool(source) and not source.startswith((".", "/", "~", "$"))


def is_ours(service: dict) -> bool:
    return "build" in service or str(service.get("image", "")).startswith("tamebi:")


def flag_values(tokens: list[str]) -> dict[str, list[str]]:
    """--flag=value and --flag value pairs (a bare flag maps to [""])."""
    values: dict[str, list[str]] = {}
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.startswith("--"):
            name, eq, value = token[2:].partition("=")
            if not eq and i + 1 < len(tokens) and not tokens[i + 1].startswith("--"):
                value = tokens[i + 1]
                i += 1
            values.setdefault(name, []).append(value)
        i += 1
    return values


def setting(service: dict, flag: str, var: str) -> str:
    """A service's setting: its --flag, else its environment variable."""
    value = flag_values(command_tokens(service)).get(flag, [""])[0]
    return value or environment(service).get(var) or ""


def host_port(url: str) -> tuple[str, int | None]:
    match = re.match(r"^[a-z]+://([^/:]+)(?::(\d+))?", url)
    if not match:
        return "", None
    port = int(match.group(2)) if match.group(2) else (443 if url.startswith("https") else 80)
    return match.group(1), port


def parse_port(spec) -> tuple[str, int, int] | str:
    """(host ip, published, target) or an error message."""
    if isinstance(spec, dict):
        try:
            return (str(spec.get("host_ip", "")), int(spec["published"]), int(spec["target"]))
        except (KeyError, ValueError):
            return f"long-syntax port {spec} needs integer published and target"
    text = interpolate(str(spec)).split("/")[0]
    parts = text.rsplit(":", 2)
    try:
        if len(parts) == 3:
            ip, published, target = parts[0], int(parts[1]), int(parts[2])
        elif len(parts) == 2:
            ip, published, target = "", int(parts[0]), int(parts[1])
        else:
            return f"port {spec!r}: publish as HOST:CONTAINER (a bare container port is published on a random port)"
    except ValueError:
        return f"port {spec!r} is not IP:HOST:CONTAINER with integer ports"
    for port in (published, target):
        if not 1 <= port <= 65535:
            return f"port {spec!r} is out of range"
    return ip, published, target


# ---- the checks -----------------------------------------------------------------------------


class Checker:
    def __init__(self, cli: Cli, root: Path = ROOT):
        self.cli = cli
        self.root = root
        self.errors: list[str] = []
        # The dependency layer's cargo check is run once, by main(), not for
        # every broken copy of the self-test.
        self.cargo = False

    def error(self, where: str, message: str) -> None:
        self.errors.append(f"{where}: {message}")

    # -- one compose file

    def check_compose(self, name: str, doc: dict) -> None:
        services: dict = doc.get("services") or {}
        production = name == "compose.yaml"
        expected = EXPECTED.get(name, set())
        for missing in sorted(expected - set(services)):
            self.error(name, f"service {missing} is missing")
        for extra in sorted(set(services) - expected):
            self.error(name, f"unexpected service {extra} (add it to EXPECTED in ci/compose/check.py)")

        declared = set((doc.get("volumes") or {}).keys())
        used: set[str] = set()
        published: dict[tuple[str, int], str] = {}
        for sname, service in services.items():
            where = f"{name}: {sname}"
            service = service or {}
            if "restart" not in service:
                self.error(where, "no restart policy")
            if sname not in ONE_SHOT and "healthcheck" not in service:
                self.error(where, "no healthcheck")
            if not is_ours(service):
                image = str(service.get("image", ""))
                tag = image.rsplit(":", 1)[1] if ":" in image.split("/")[-1] else ""
                if not tag or tag == "latest":
                    self.error(where, f"image {image!r} is not pinned to a version")
                if not production:
                    self.error(where, "the fake stack runs only images built from this repository")
            for source, _target in volume_mounts(service):
                if named(source):
                    used.add(source)
                    if source not in declared:
                        self.error(where, f"named volume {source!r} is not declared under volumes:")
            for spec in as_list(service.get("ports")):
                parsed = parse_port(spec)
                if isinstance(parsed, str):
                    self.error(where, parsed)
                    continue
                ip, port, _target = parsed
                # The same host port on the same address, or on all addresses.
                for (other_ip, other_port), other in published.items():
                    if other_port == port and other != sname and (
                        other_ip == ip or "" in (ip, other_ip) or "0.0.0.0" in (ip, other_ip)
                    ):
                        self.error(where, f"host port {port} is already published by {other}")
                published[(ip, port)] = sname
            for spec in as_list(service.get("expose")):
                if not re.fullmatch(r"\d{1,5}", str(spec)) or not 1 <= int(spec) <= 65535:
                    self.error(where, f"expose {spec!r} is not a port number")
            self.check_env_files(where, service)
            if is_ours(service):
                self.check_ours(name, sname, service, production)
        for unused in sorted(declared - used):
            self.error(name, f"volume {unused!r} is declared but mounted nowhere")

        self.check_invariants(name, services)
        self.check_urls(name, services, production)
        if production:
            self.check_setup_urls(services)

    def check_env_files(self, where: str, service: dict) -> None:
        for entry in as_list(service.get("env_file")):
            path = entry.get("path") if isinstance(entry, dict) else entry
            match = re.fullmatch(r"deploy/([a-z0-9-]+)\.env", str(path))
            if not match:
                self.error(where, f"env_file {path!r}: use deploy/<name>.env (with a committed .example)")
                continue
            example = f"{path}.example"
            if not (self.root / example).exists():
                self.error(where, f"env_file {path}: {example} does not exist")
            elif not self.git("ls-files", "--error-unmatch", example):
                self.error(where, f"env_file {path}: {example} is not committed")
            if not self.git("check-ignore", "-q", str(path)):
                self.error(where, f"env_file {path} is not git-ignored: real secrets must never be committed")

    def git(self, *args: str) -> bool:
        result = subprocess.run(["git", "-C", str(self.root), *args], capture_output=True)
        return result.returncode == 0

    def service_env(self, service: dict) -> dict[str, str]:
        """Every variable a service gets -> where from."""
        names = {key: "environment" for key in environment(service)}
        for entry in as_list(service.get("env_file")):
            path = entry.get("path") if isinstance(entry, dict) else entry
            for key in env_file_vars(self.root / f"{path}.example"):
                names.setdefault(key, f"{path}.example")
        return names

    def check_command(self, where: str, tokens: list[str]) -> tuple[str, ...] | None:
        resolved = self.cli.resolve(tokens)
        if resolved is None:
            self.error(where, f"command {tokens[:2]} does not start with a tamebi subcommand")
            return None
        path, rest = resolved
        options = self.cli.options(path)
        i = 0
        while i < len(rest):
            token = rest[i]
            if not token.startswith("--"):
                self.error(where, f"`tamebi {' '.join(path)}` takes no argument {token!r}")
                i += 1
                continue
            flag, eq, _value = token[2:].partition("=")
            option = options.get(flag)
            if option is None:
                self.error(where, f"`tamebi {' '.join(path)} --help` lists no --{flag}")
            else:
                if option["secret"]:
                    self.error(where, f"--{flag} carries a secret on the command line (shows in ps): use {option['env']}")
                if option["value"] and not eq:
                    i += 1
                    if i >= len(rest):
                        self.error(where, f"--{flag} needs a value")
                elif not option["value"] and eq:
                    self.error(where, f"--{flag} takes no value")
            i += 1
        return path

    def check_ours(self, name: str, sname: str, service: dict, production: bool) -> None:
        where = f"{name}: {sname}"
        tokens = command_tokens(service)
        if not tokens:
            self.error(where, "no command: each service is the image with its subcommand")
            return
        paths = [self.check_command(where, tokens)]
        if sname == "tamebi-cli":
            paths += self.setup_sh_calls()
        readable: dict[str, bool] = {}
        for path in filter(None, paths):
            readable.update(self.cli.env(path))
        inline = environment(service)
        for var, source in self.service_env(service).items():
            if var in EXTRA_ENV:
                continue
            if var not in readable:
                self.error(where, f"{var} (from {source}) is read by no `tamebi {' / '.join(' '.join(p) for p in paths if p)}`")
            elif production and readable[var] and var in inline:
                self.error(where, f"{var} is a secret set inline: put it in an env file")
        # The port it listens on is the one its healthcheck asks and that is exposed.
        listen = flag_values(tokens).get("listen", [""])[0]
        if listen:
            port = listen.rsplit(":", 1)[-1]
            if not listen.startswith("0.0.0.0:"):
                self.error(where, f"--listen {listen}: inside a container listen on 0.0.0.0")
            test = [str(t) for t in as_list((service.get("healthcheck") or {}).get("test"))]
            if sname not in ONE_SHOT and port not in test:
                self.error(where, f"the healthcheck does not ask port {port} (--listen)")
            exposed = {str(e) for e in as_list(service.get("expose"))}
            targets = {str(p[2]) for p in map(parse_port, as_list(service.get("ports"))) if not isinstance(p, str)}
            if port not in exposed | targets:
                self.error(where, f"port {port} (--listen) is neither exposed nor published")

    def setup_sh_calls(self) -> list[tuple[str, ...]]:
        """Each `... run ... tamebi-cli <sub> ...` line of deploy/setup.sh, checked."""
        path = self.root / "deploy/setup.sh"
        if not path.exists():
            self.error("deploy/setup.sh", "missing")
            return []
        text = re.sub(r"\\\n\s*", " ", path.read_text())
        found = []
        for number, line in enumerate(text.splitlines(), 1):
            code = line.split("#", 1)[0]
            if "tamebi-cli" not in code or " run " not in f" {code} ":
                continue
            try:
                tokens = shlex.split(code)
            except ValueError:
                continue
            where = f"deploy/setup.sh:{number}"
            index = tokens.index("tamebi-cli")
            passed = [tokens[i + 1] for i in range(index) if tokens[i] == "-e" and i + 1 < index]
            sub = self.check_command(where, tokens[index + 1 :])
            if sub:
                found.append(sub)
                reads = self.cli.env(sub)
                for var in passed:
                    if var not in reads:
                        self.error(where, f"-e {var}: `tamebi {' '.join(sub)}` does not read it")
        return found

    def check_invariants(self, name: str, services: dict) -> None:
        orchestrator = services.get("orchestrator") or {}
        mcp_nextcloud = services.get("mcp-nextcloud") or {}
        where = f"{name}: orchestrator"
        # The index is mcp-nextcloud's alone.
        index_volumes = {s for s, _ in volume_mounts(mcp_nextcloud) if named(s)}
        if "index" not in index_volumes:
            self.error(f"{name}: mcp-nextcloud", "the index volume is not mounted")
        for sname, service in services.items():
            if sname == "mcp-nextcloud":
                continue
            shared = index_volumes & {s for s, _ in volume_mounts(service or {})}
            if shared:
                self.error(f"{name}: {sname}", f"mounts {sorted(shared)}, mcp-nextcloud's index volume: it holds the drive's text")
        index_db = setting(mcp_nextcloud, "index-db", "TAMEBI_INDEX_DB")
        index_targets = [t for s, t in volume_mounts(mcp_nextcloud) if s == "index"]
        if not any(index_db.startswith(t.rstrip("/") + "/") for t in index_targets):
            self.error(f"{name}: mcp-nextcloud", f"--index-db {index_db!r} is not on the index volume")
        # The orchestrator: no way to Nextcloud, its own data volume, not published.
        for var, source in self.service_env(orchestrator).items():
            if ORCHESTRATOR_FORBIDDEN_ENV.search(var):
                self.error(where, f"{var} (from {source}): the orchestrator holds no Nextcloud URL, credential or workspace data")
        data_dir = setting(orchestrator, "data-dir", "TAMEBI_DATA_DIR")
        mounts = volume_mounts(orchestrator)
        if not any(named(s) and data_dir.startswith(t.rstrip("/")) for s, t in mounts):
            self.error(where, f"--data-dir {data_dir!r} is not on a named volume: chat.db, audit.db and memory.db would be lost")
        if orchestrator.get("ports"):
            self.error(where, "published: only the Tamebi app inside Nextcloud calls it (use expose)")
        for sname, service in services.items():
            if sname in ("orchestrator", "tamebi-cli") or not is_ours(service or {}):
                continue
            for var in MODEL_SECRETS & set(self.service_env(service or {})):
                if var == "TAMEBI_SHARED_SECRET" and sname == "fake-nextcloud":
                    continue  # the fake's Tamebi app signs with it, as nc-app does
                self.error(f"{name}: {sname}", f"{var}: the model key and the app's secret belong to the orchestrator")

    def check_urls(self, name: str, services: dict, production: bool) -> None:
        orchestrator_flags = flag_values(command_tokens(services.get("orchestrator") or {}))
        mcp = orchestrator_flags.get("mcp", [""])[0]
        for entry in filter(None, mcp.split(",")):
            server, _, url = entry.partition("=")
            sname = f"mcp-{server}"
            where = f"{name}: orchestrator --mcp {entry}"
            service = services.get(sname)
            if service is None:
                self.error(where, f"no service {sname}")
                continue
            flags = flag_values(command_tokens(service))
            host, port = host_port(url)
            if host != sname:
                self.error(where, f"reaches {host!r}, not the service {sname}")
            listen = flags.get("listen", [""])[0]
            if port is None or not listen.endswith(f":{port}"):
                self.error(where, f"port {port} is not {sname}'s --listen {listen}")
            if flags.get("canonical-url", [""])[0] != url:
                self.error(where, f"{sname}'s --canonical-url (the token audience) is {flags.get('canonical-url')}: the orchestrator's URL and the audience must agree here")
            if host not in flags.get("allowed-host", []) + flags.get("allowed-hosts", []):
                self.error(where, f"{sname} does not list --allowed-host={host}: the orchestrator's Host would be refused")
        # The issuer is Nextcloud's public URL, never its internal name.
        if production:
            nextcloud_env = environment(services.get("nextcloud") or {})
            public = nextcloud_env.get("OVERWRITECLIURL") or ""
            expected = f"{nextcloud_env.get('OVERWRITEPROTOCOL')}://{nextcloud_env.get('OVERWRITEHOST')}"
            if not public or public != expected:
                self.error(f"{name}: nextcloud", f"OVERWRITECLIURL {public!r} must be OVERWRITEPROTOCOL://OVERWRITEHOST ({expected!r}): the issuer")
            cron_env = environment(services.get("cron") or {})
            for key in ("OVERWRITEHOST", "OVERWRITEPROTOCOL", "OVERWRITECLIURL"):
                if cron_env.get(key) != nextcloud_env.get(key):
                    self.error(f"{name}: cron", f"{key} differs from nextcloud's: background jobs would name Nextcloud otherwise")
            internal = "nextcloud"
        else:
            fixture = (self.root / "scenarios/fixtures/compose.toml").read_text()
            match = re.search(r'^overwritehost = "([^"]+)"', fixture, re.M)
            public = f"http://{match.group(1)}" if match else ""
            internal = "fake-nextcloud"
            for spec in as_list((services.get(internal) or {}).get("ports")):
                parsed = parse_port(spec)
                if not isinstance(parsed, str) and public != f"http://localhost:{parsed[1]}":
                    self.error(f"{name}: {internal}", f"published on {parsed[1]} but the fixture's overwritehost says {public}")
        for sname in ("mcp-nextcloud", "mcp-mail"):
            flags = flag_values(command_tokens(services.get(sname) or {}))
            where = f"{name}: {sname}"
            issuer = flags.get("issuer", [""])[0]
            if issuer != public:
                self.error(where, f"--issuer {issuer!r} is not Nextcloud's public URL {public!r}: every token would be refused (iss mismatch)")
            nextcloud_url = flags.get("nextcloud-url", [""])[0]
            if host_port(nextcloud_url)[0] != internal:
                self.error(where, f"--nextcloud-url {nextcloud_url!r} is not the internal http://{internal}")

    def check_setup_urls(self, services: dict) -> None:
        """deploy/setup.sh names the same audiences and orchestrator URL."""
        path = self.root / "deploy/setup.sh"
        text = path.read_text() if path.exists() else ""
        for sname in ("mcp-nextcloud", "mcp-mail"):
            canonical = flag_values(command_tokens(services.get(sname) or {})).get("canonical-url", [""])[0]
            if f"resource={canonical} " not in text and f"resource={canonical}\n" not in text:
                self.error("deploy/setup.sh", f"creates no OIDC client with resource_url {canonical} ({sname}'s canonical URL): its tokens would be refused")
        listen = flag_values(command_tokens(services.get("orchestrator") or {})).get("listen", [""])[0]
        url = f"http://orchestrator:{listen.rsplit(':', 1)[-1]}"
        if f"orchestrator_url {url}" not in text:
            self.error("deploy/setup.sh", f"does not set the app's orchestrator_url to {url}")

    # -- the other files

    def check_dockerfile(self, text: str) -> None:
        where = "Dockerfile"
        stages = re.split(r"^FROM\s", text, flags=re.M)
        if len(stages) < 3:
            self.error(where, "expected a build stage and a runtime stage")
        runtime = stages[-1]
        users = re.findall(r"^USER\s+(\S+)", runtime, re.M)
        if not users:
            self.error(where, "the runtime stage sets no USER: it would run as root")
        elif users[-1].split(":")[0] in ("root", "0"):
            self.error(where, f"the runtime stage runs as {users[-1]}")
        if not re.search(r'^ENTRYPOINT \["tamebi"\]', runtime, re.M):
            self.error(where, 'the runtime ENTRYPOINT is not ["tamebi"] (compose commands are subcommands)')
        private = " ".join(re.findall(r"chmod 0?700 ([^&\n\\]+)", runtime))
        for folder in ("/var/lib/tamebi/orchestrator", "/var/lib/tamebi/index"):
            if folder not in private.split():
                self.error(where, f"the runtime stage does not chmod 0700 {folder}: other accounts could read its databases")
        if "--locked" not in text or "--release" not in text:
            self.error(where, "cargo build must be --release --locked")
        for manifest in sorted((self.root / "crates").glob("*/Cargo.toml")):
            relative = manifest.relative_to(self.root).as_posix()
            if f"COPY {relative} " not in text:
                self.error(where, f"the dependency layer does not copy {relative}")

    def check_dependency_layer(self, dockerfile: str) -> None:
        """Re-enact the Dockerfile's dependency layer (its COPYs of the
        manifests and the RUN that writes stand-in sources) in a temporary
        directory, and ask cargo whether that workspace resolves with the
        lockfile as it is (--locked) for this host."""
        where = "Dockerfile (dependency layer)"
        if shutil.which("cargo") is None:
            self.error(where, "cargo is not on PATH: cannot re-enact the dependency layer")
            return
        build = re.split(r"^FROM\s", dockerfile, flags=re.M)[1]
        run = re.search(r"^RUN (for crate in .*?)&& cargo build", build, re.M | re.S)
        if not run:
            self.error(where, "no RUN writing stand-in sources before the first cargo build")
            return
        with tempfile.TemporaryDirectory() as tmp:
            for line in re.findall(r"^COPY (?!--from)(.+)$", build, re.M):
                *sources, destination = line.split()
                if sources == ["crates"]:
                    break  # the real sources: the dependency layer ends here
                for source in sources:
                    target = Path(tmp) / (destination if destination != "./" else "")
                    if destination.endswith("/") or destination == "./":
                        target = target / Path(source).name
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy(self.root / source, target)
            stand_ins = subprocess.run(
                ["bash", "-c", run.group(1).replace("\\\n", " ") + " true"], cwd=tmp, capture_output=True, text=True
            )
            if stand_ins.returncode != 0:
                self.error(where, f"the stand-in sources cannot be written: {stand_ins.stderr.strip()}")
                return
            # The Dockerfile's own cargo build, planned and not run: the unit
            # graph fails exactly where the build would (a missing target
            # file, a lockfile needing a change) without compiling anything.
            # --unit-graph is unstable; RUSTC_BOOTSTRAP lets stable cargo plan it.
            tree = subprocess.run(
                ["cargo", "build", "--release", "--locked", "--offline", "--bin", "tamebi",
                 "--unit-graph", "-Z", "unstable-options"],
                cwd=tmp, capture_output=True, text=True, env=dict(os.environ, RUSTC_BOOTSTRAP="1"),
            )
            if tree.returncode != 0:
                self.error(where, f"cargo build would fail on the stand-in sources: {tree.stderr.strip()[-400:]}")

    def check_fixture(self) -> None:
        demo = (self.root / "scenarios/fixtures/demo.toml").read_text()
        path = self.root / "scenarios/fixtures/compose.toml"
        if not path.exists() or path.read_text() != compose_fixture(demo):
            self.error(str(path.relative_to(self.root)), "differs from demo.toml with the stack's URLs: run ci/compose/check.py --write-fixture")

    def run(self, files: dict[str, dict]) -> None:
        for name, doc in files.items():
            self.check_compose(name, doc)
        self.check_dockerfile((self.root / "Dockerfile").read_text())
        if self.cargo:
            self.check_dependency_layer((self.root / "Dockerfile").read_text())
        self.check_fixture()
        ignore = (self.root / ".dockerignore").read_text() if (self.root / ".dockerignore").exists() else ""
        for needed in ("target/", "node_modules", "data/"):
            if needed not in ignore:
                self.error(".dockerignore", f"does not exclude {needed}")
        # What the Dockerfile copies from the context must not be ignored.
        patterns = [p.strip().rstrip("/") for p in ignore.splitlines() if p.strip() and not p.startswith("#")]
        dockerfile = (self.root / "Dockerfile").read_text()
        for line in re.findall(r"^COPY (?!--from)(.+)$", dockerfile, re.M):
            for source in line.split()[:-1]:
                parts = source.split("/")
                prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
                for pattern in patterns:
                    if any(fnmatch.fnmatch(prefix, pattern) for prefix in prefixes):
                        self.error(".dockerignore", f"{pattern!r} hides {source}, which the Dockerfile copies")


def compose_fixture(demo: str) -> str:
    """demo.toml with the URLs of compose.fake.yaml."""
    out = demo.replace('overwritehost = "self"', 'overwritehost = "localhost:8080"')
    out = out.replace("http://127.0.0.1:8080/", "http://localhost:8080/")
    out = out.replace("http://127.0.0.1:9101/mcp", "http://mcp-nextcloud:9101/mcp")
    out = out.replace("http://127.0.0.1:9102/mcp", "http://mcp-mail:9102/mcp")
    head = (
        "# GENERATED from demo.toml for compose.fake.yaml: the same world with the\n"
        "# URLs of that stack (the published localhost:8080 as overwritehost, the\n"
        "# MCP servers' container names as the clients' resource URLs). Do not edit:\n"
        "# `python3 ci/compose/check.py --write-fixture`; CI fails when it drifts.\n#\n"
    )
    return head + out


def load(name: str, root: Path = ROOT) -> dict:
    return yaml.safe_load((root / name).read_text())


# ---- the negative self-test -----------------------------------------------------------------


def breakages():
    """(what, change to the parsed files, a phrase the checker must say)."""

    def on(service, change, file="compose.yaml"):
        def apply(files):
            change(files[file]["services"][service])
        return apply

    def cmd(service, old, new, file="compose.yaml"):
        def change(s):
            s["command"] = [new if t == old else t for t in s["command"]]
        return on(service, change, file)

    return [
        ("an unknown flag", cmd("orchestrator", "--listen=0.0.0.0:9100", "--port=9100"), "lists no --port"),
        ("an unknown subcommand", cmd("mcp-mail", "mcp-mail", "mcp-imap"), "does not start with a tamebi subcommand"),
        ("the index volume on the orchestrator",
         on("orchestrator", lambda s: s["volumes"].append("index:/var/lib/tamebi/index")), "index volume"),
        ("a Nextcloud credential on the orchestrator",
         on("orchestrator", lambda s: s.setdefault("environment", {}).update(NEXTCLOUD_ADMIN_PASSWORD="x")),
         "holds no Nextcloud"),
        ("an env variable nothing reads",
         on("mcp-mail", lambda s: s.setdefault("environment", {}).update(TAMEBI_MAIL_PASSWORD="x")), "is read by no"),
        ("an inline secret in production",
         on("mcp-nextcloud", lambda s: s.setdefault("environment", {}).update(TAMEBI_WEBHOOK_SECRET="x")),
         "secret set inline"),
        ("a secret as a flag", cmd("mcp-nextcloud", "--converter-url=http://onlyoffice", "--converter-secret=x"),
         "carries a secret"),
        ("a clashing port", on("onlyoffice", lambda s: s.__setitem__("ports", ["127.0.0.1:80:80"])),
         "already published"),
        ("a malformed port", on("nextcloud", lambda s: s.__setitem__("ports", ["eighty:80"])), "integer ports"),
        ("an undeclared volume", lambda f: f["compose.yaml"]["volumes"].pop("db"), "not declared"),
        ("the orchestrator published", on("orchestrator", lambda s: s.__setitem__("ports", ["127.0.0.1:9100:9100"])),
         "published"),
        ("the issuer swapped for the internal URL",
         cmd("mcp-mail", "${NC_PUBLIC_PROTOCOL:-http}://${NC_PUBLIC_HOST:-localhost}", "http://nextcloud"),
         "iss mismatch"),
        ("a missing allowed host", cmd("mcp-nextcloud", "--allowed-host=mcp-nextcloud", "--allowed-host=localhost"),
         "--allowed-host=mcp-nextcloud"),
        ("an env file without its example",
         on("orchestrator", lambda s: s.__setitem__("env_file", ["deploy/model.env"])), "does not exist"),
        ("the index off its volume",
         on("mcp-nextcloud", lambda s: s["environment"].update(TAMEBI_INDEX_DB="/tmp/index.db")),
         "not on the index volume"),
        ("chat.db off a volume",
         on("orchestrator", lambda s: s["environment"].update(TAMEBI_DATA_DIR="/tmp/orchestrator")),
         "not on a named volume"),
        ("an audience setup.sh does not create",
         cmd("mcp-mail", "--canonical-url=http://mcp-mail:9102/mcp", "--canonical-url=http://mcp-mail:9102/mail"),
         "creates no OIDC client"),
        ("no healthcheck", on("mcp-mail", lambda s: s.pop("healthcheck")), "no healthcheck"),
        ("a service missing", lambda f: f["compose.fake.yaml"]["services"].pop("fake-model"), "fake-model is missing"),
        ("an unpinned image", on("db", lambda s: s.__setitem__("image", "postgres")), "not pinned"),
        ("the fake index volume shared",
         on("mcp-mail", lambda s: s.__setitem__("volumes", ["index:/x"]), "compose.fake.yaml"), "index volume"),
    ]


def self_test(cli: Cli) -> int:
    pristine = {name: load(name) for name in EXPECTED}
    failures = []
    baseline = Checker(cli)
    baseline.run(copy.deepcopy(pristine))
    if baseline.errors:
        failures.append("the committed files do not pass, so a broken copy proves nothing")
    for what, change, phrase in breakages():
        files = copy.deepcopy(pristine)
        change(files)
        checker = Checker(cli)
        checker.run(files)
        if not any(phrase in error for error in checker.errors):
            failures.append(f"{what}: not caught (expected {phrase!r}; got {checker.errors})")
        else:
            print(f"self-test: caught {what}")
    # And the whole program on a broken copy of the tree's files: exit 1.
    with tempfile.TemporaryDirectory() as tmp:
        broken = Path(tmp) / "compose.yaml"
        text = (ROOT / "compose.yaml").read_text().replace("--listen=0.0.0.0:9100", "--listen-on=0.0.0.0:9100")
        broken.write_text(text)
        result = subprocess.run(
            [sys.executable, __file__, cli.binary, "--compose", str(broken)], capture_output=True, text=True
        )
        if result.returncode != 1 or "--listen-on" not in result.stdout:
            failures.append(f"the program passed a broken compose.yaml (exit {result.returncode})")
        else:
            print("self-test: the program exits 1 on a broken copy of compose.yaml")
        broken_docker = Path(tmp) / "Dockerfile"
        broken_docker.write_text((ROOT / "Dockerfile").read_text().replace("USER 10001:10001", "USER root"))
        checker = Checker(cli)
        checker.check_dockerfile(broken_docker.read_text())
        if not any("runs as root" in e for e in checker.errors):
            failures.append("a root runtime user was not caught")
        else:
            print("self-test: caught a root runtime user in the Dockerfile")
        checker = Checker(cli)
        checker.check_dockerfile((ROOT / "Dockerfile").read_text().replace("chmod 0700", "chmod 0755"))
        if not any("does not chmod 0700" in e for e in checker.errors):
            failures.append("world-readable data folders were not caught")
        else:
            print("self-test: caught world-readable data folders in the Dockerfile")
        # The dependency layer without the stand-in for the scenarios test.
        dockerfile = (ROOT / "Dockerfile").read_text()
        broken_layer = re.sub(r"^.*tests/scenarios\.rs.*\n", "", dockerfile, flags=re.M)
        checker = Checker(cli)
        checker.check_dependency_layer(broken_layer)
        if broken_layer == dockerfile or not any("cargo build would fail" in e for e in checker.errors):
            failures.append("a dependency layer missing a stand-in was not caught")
        else:
            print("self-test: caught a dependency layer cargo would refuse")
    for failure in failures:
        print(f"SELF-TEST FAILED: {failure}")
    print(f"self-test: {len(breakages()) + 4 - len(failures)} broken copies caught, {len(failures)} missed")
    return 1 if failures else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary", nargs="?", help="the built tamebi binary (target/debug/tamebi)")
    parser.add_argument("--compose", help="check this file instead of compose.yaml")
    parser.add_argument("--self-test", action="store_true", help="also prove the checks fail on broken copies")
    parser.add_argument("--write-fixture", action="store_true", help="regenerate scenarios/fixtures/compose.toml")
    args = parser.parse_args()
    if args.write_fixture:
        demo = (ROOT / "scenarios/fixtures/demo.toml").read_text()
        (ROOT / "scenarios/fixtures/compose.toml").write_text(compose_fixture(demo))
        print("wrote scenarios/fixtures/compose.toml")
        return 0
    if not args.binary:
        parser.error("give the tamebi binary, e.g. target/debug/tamebi")
    cli = Cli(args.binary)
    if not cli.subcommands(()):
        print(f"{args.binary} --help lists no subcommands: build it first (cargo build --bin tamebi)")
        return 2
    files = {name: load(name) for name in EXPECTED}
    if args.compose:
        files["compose.yaml"] = yaml.safe_load(Path(args.compose).read_text())
    checker = Checker(cli)
    checker.cargo = True
    checker.run(files)
    for error in checker.errors:
        print(f"ERROR {error}")
    status = 1 if checker.errors else 0
    print(f"compose check: {len(checker.errors)} error(s) in {', '.join(files)}, Dockerfile, fixture")
    if args.self_test and status == 0:
        status = self_test(cli)
    return status


if __name__ == "__main__":
    sys.exit(main())
