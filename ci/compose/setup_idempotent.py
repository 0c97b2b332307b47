#!/usr/bin/env python3
"""deploy/setup.sh against a stand-in `docker compose`: does it set up what
it should, and does a second run change nothing?

    python3 ci/compose/setup_idempotent.py

No Docker here, so this script plays `docker compose` (COMPOSE=…): it keeps
a small Nextcloud state in a JSON file (apps, config.php, app config, OIDC
clients, user_oidc providers, users) and answers the occ commands setup.sh
uses the way occ prints them; `run … tamebi-cli …` is recorded. It checks
the logic of setup.sh (look before you change, the same values every run),
not occ itself: the command names and options follow docs/nc-app.md and the
apps' sources, and were not run against a real Nextcloud.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PUBLIC = "https://cloud.example.org"


def fake_compose(argv: list[str]) -> int:
    """The stand-in `docker compose`; state in $FAKE_COMPOSE_STATE."""
    state_path = Path(os.environ["FAKE_COMPOSE_STATE"])
    state = json.loads(state_path.read_text())
    log = state.setdefault("log", [])

    def save() -> None:
        state_path.write_text(json.dumps(state, indent=1, sort_keys=True))

    def change(what: str) -> None:
        state.setdefault("changes", []).append(what)

    args = list(argv)
    if args[:1] == ["version"]:
        return 0
    if args[:2] == ["ps", "-q"]:
        print("f00d")
        return 0
    if args[:1] == ["run"]:
        rest = args[1:]
        passed = []
        while rest and rest[0] != "tamebi-cli":
            option = rest.pop(0)
            if option == "-e":
                name = rest.pop(0)
                if not os.environ.get(name):
                    print(f"fake compose: -e {name} but {name} is empty", file=sys.stderr)
                    return 1
                passed.append(name)
        log.append({"run": rest[1:], "env": passed})
        save()
        return 0
    if args[:1] != ["exec"]:
        print(f"fake compose: unexpected {args}", file=sys.stderr)
        return 2
    rest = args[1:]
    while rest and rest[0].startswith("-"):
        option = rest.pop(0)
        if option in ("-u", "-e"):
            rest.pop(0)
    service, *command = rest
    assert service == "nextcloud", service
    if command[:1] == ["printenv"]:
        print({"OVERWRITECLIURL": PUBLIC, "OVERWRITEHOST": PUBLIC.split("://")[1]}[command[1]])
        return 0
    assert command[:2] == ["php", "occ"], command
    occ = command[2:]
    name, params = occ[0], occ[1:]
    options = {}
    positional = []
    for param in params:
        if param.startswith("--"):
            key, _, value = param[2:].partition("=")
            options[key] = value
        else:
            positional.append(param)
    system = state.setdefault("system", {"overwritehost": PUBLIC.split("://")[1]})
    apps = state.setdefault("apps", {"webhook_listeners": "disabled", "tamebi": "disabled"})
    appconfig = state.setdefault("appconfig", {})
    if name == "status":
        print(json.dumps({"installed": True, "version": "31.0.5.1", "maintenance": False}, separators=(",", ":")))
    elif name == "config:system:get":
        value = system
        for key in positional:
            value = value.get(key) if isinstance(value, dict) else None
        if value is None:
            return 1
        print(json.dumps(value) if isinstance(value, bool) else value)
    elif name == "config:system:set":
        value = options["value"]
        if options.get("type") == "boolean":
            value = value == "true"
        *parents, key = positional
        target = system
        for parent in parents:
            target = target.setdefault(parent, {})
        if target.get(key) != value:
            target[key] = value
            change(f"config:system:set {' '.join(positional)}={value}")
    elif name == "app:list":
        print("Enabled:")
        for app, status in sorted(apps.items()):
            if status == "enabled":
                print(f"  - {app}: 1.0.0")
        print("Disabled:")
        for app, status in sorted(apps.items()):
            if status == "disabled":
                print(f"  - {app}")
    elif name in ("app:enable", "app:install"):
        if name == "app:install" and positional[0] in apps:
            print(f"{positional[0]} already installed", file=sys.stderr)
            return 1
        apps[positional[0]] = "enabled"
        change(f"{name} {positional[0]}")
    elif name == "oidc:list":
        clients = state.setdefault("oidc", [])
        print("Clients: " + json.dumps(clients, indent=4) if clients else "No clients found.")
    elif name == "oidc:create":
        for required in ("token_type", "resource_url", "client_id", "client_secret", "type", "flow"):
            assert required in options, f"oidc:create without --{required}"
        assert options["token_type"] == "jwt"
        state.setdefault("oidc", []).append(
            {"name": positional[0], "redirect_uris": positional[1:], "client_identifier": options["client_id"],
             "resource_url": options["resource_url"]}
        )
        change(f"oidc:create {positional[0]}")
    elif name == "config:app:get":
        value = appconfig.get(f"{positional[0]} {positional[1]}")
        if value is None:
            return 1
        print(value)
    elif name == "config:app:set":
        key = f"{positional[0]} {positional[1]}"
        if appconfig.get(key) != options["value"]:
            appconfig[key] = options["value"]
            change(f"config:app:set {key}")
    elif name == "user_oidc:provider":
        providers = state.setdefault("providers", {})
        if providers.get(positional[0]) != options:
            providers[positional[0]] = options
            change(f"user_oidc:provider {positional[0]}")
    elif name == "user:info":
        return 0 if positional[0] in state.setdefault("users", []) else 1
    elif name == "user:add":
        assert "password-from-env" in options and os.environ.get("OC_PASS"), "user:add needs OC_PASS"
        state.setdefault("users", []).append(positional[0])
        change(f"user:add {positional[0]}")
    else:
        print(f"fake occ: unknown command {name}", file=sys.stderr)
        return 2
    save()
    return 0


def main() -> int:
    failures: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp)
        (tree / "deploy").mkdir()
        for path in (ROOT / "deploy").iterdir():
            if path.name.endswith(".example") or path.name == "setup.sh":
                shutil.copy(path, tree / "deploy" / path.name)
        state = tree / "state.json"
        state.write_text("{}")
        env = dict(
            os.environ,
            COMPOSE=f"{sys.executable} {Path(__file__).resolve()} --fake-compose",
            FAKE_COMPOSE_STATE=str(state),
            OO_PUBLIC_URL="https://office.example.org/",
        )
        subprocess.run(["bash", "deploy/setup.sh", "init"], cwd=tree, env=env, check=True, capture_output=True)
        for run in (1, 2):
            result = subprocess.run(["bash", "deploy/setup.sh"], cwd=tree, env=env, capture_output=True, text=True)
            if result.returncode != 0:
                failures.append(f"run {run} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
                break
            data = json.loads(state.read_text())
            changes = data.pop("changes", [])
            state.write_text(json.dumps(data))
            print(f"run {run}: {len(changes)} change(s)")
            if run == 1:
                first = data
                expected = {
                    "oidc clients": sorted(c["resource_url"] for c in data.get("oidc", [])),
                    "apps": sorted(a for a, s in data["apps"].items() if s == "enabled"),
                }
                want = {
                    "oidc clients": sorted(["http://mcp-nextcloud:9101/mcp", "http://mcp-mail:9102/mcp", PUBLIC]),
                    "apps": sorted(["oidc", "user_oidc", "webhook_listeners", "mail", "deck", "calendar",
                                    "contacts", "onlyoffice", "tamebi"]),
                }
                if expected != want:
                    failures.append(f"after the first run: {expected}, expected {want}")
                user_oidc = data["system"].get("user_oidc", {})
                if user_oidc != {"selfencoded_bearer_validation": True,
                                 "selfencoded_bearer_validation_audience_check": True,
                                 "oidc_provider_bearer_validation": False}:
                    failures.append(f"user_oidc settings: {user_oidc}")
                provider = data.get("providers", {}).get("nextcloud-self", {})
                if provider.get("clientid") != PUBLIC or provider.get("check-bearer") != "1":
                    failures.append(f"the nextcloud-self provider: {provider}")
                app = data["appconfig"]
                for key, value in [("tamebi orchestrator_url", "http://orchestrator:9100"),
                                   ("tamebi internal_url", "http://localhost"),
                                   ("tamebi redirect_uri", f"{PUBLIC}/index.php/apps/tamebi/oauth/callback"),
                                   ("onlyoffice DocumentServerUrl", "https://office.example.org/"),
                                   ("onlyoffice DocumentServerInternalUrl", "http://onlyoffice/")]:
                    if app.get(key) != value:
                        failures.append(f"{key} = {app.get(key)!r}, expected {value!r}")
                if len(app.get("tamebi shared_secret", "")) < 32:
                    failures.append("the app's shared secret is shorter than 32 bytes")
                runs = [entry["run"][:2] for entry in data.get("log", [])]
                if runs != [["webhooks", "register"], ["doctor"]]:
                    failures.append(f"tamebi-cli runs: {runs}")
            elif changes:
                failures.append(f"the second run changed things: {changes}")
            elif {k: v for k, v in data.items() if k != "log"} != {k: v for k, v in first.items() if k != "log"}:
                failures.append("the second run left another state")
    for failure in failures:
        print(f"FAILED: {failure}")
    print(f"setup.sh idempotence: {'ok' if not failures else 'FAILED'}")
    return 1 if failures else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--fake-compose"]:
        sys.exit(fake_compose(sys.argv[2:]))
    sys.exit(main())
