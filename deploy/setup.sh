#!/usr/bin/env bash
# Sets up the production Compose stack (compose.yaml), idempotently: every
# step looks before it changes anything, so running it again changes nothing.
#
#   bash deploy/setup.sh init    # deploy/*.env from the examples, secrets generated (once)
#   docker compose up -d --build
#   bash deploy/setup.sh         # apps, OIDC clients, app settings, user_oidc,
#                                # OnlyOffice, webhooks, then `tamebi doctor`
#
# Every occ call runs as `docker compose exec -u www-data nextcloud php occ`.
# COMPOSE overrides the compose command (e.g. COMPOSE="docker compose -f
# compose.yaml -f compose.override.yaml"). Manual: docs/compose.md.
#
# Written without a Docker engine at hand: `bash -n`, and two runs against a
# stand-in for docker compose and occ (ci/compose/setup_idempotent.py: the
# second changes nothing); not yet run against a live Nextcloud.
set -euo pipefail
cd "$(dirname "$0")/.."

COMPOSE=${COMPOSE:-docker compose}
DEPLOY=deploy
# The OIDC clients' ids and secrets, chosen here on the first run and kept
# (git-ignored, mode 600) so later runs find the same clients.
CLIENTS_FILE=$DEPLOY/oidc-clients.env

say() { printf '==> %s\n' "$*"; }
ok() { printf '    ok: %s\n' "$*"; }
die() { printf 'setup.sh: %s\n' "$*" >&2; exit 1; }

random_hex() { od -An -N"${1:-24}" -tx1 /dev/urandom | tr -d ' \n'; }

# The value of KEY in an env file (KEY=VALUE lines; no shell evaluation).
env_value() {
    local file=$1 key=$2 line
    [ -f "$file" ] || return 0
    line=$(grep -E "^${key}=" "$file" | tail -n 1 || true)
    printf '%s' "${line#*=}"
}

# ---- init: the env files -------------------------------------------------------

init() {
    declare -A shared=()
    local example target line key value placeholder
    for example in "$DEPLOY"/*.env.example; do
        target=${example%.example}
        if [ -f "$target" ]; then
            ok "$target exists (left as it is)"
            # Remember its shared values, so a new file gets the same ones.
            while IFS= read -r line; do
                [[ $line =~ ^([A-Z0-9_]+)=(.*)$ ]] || continue
                placeholder=$(env_value "$example" "${BASH_REMATCH[1]}")
                if [[ $placeholder =~ ^@generate:([a-z0-9-]+)@$ ]]; then
                    shared[${BASH_REMATCH[1]}]=$(env_value "$target" "${line%%=*}")
                fi
            done <"$target"
            continue
        fi
        umask 077
        : >"$target"
        while IFS= read -r line || [ -n "$line" ]; do
            if [[ $line =~ ^([A-Z0-9_]+)=@generate(:([a-z0-9-]+))?@$ ]]; then
                key=${BASH_REMATCH[1]}
                if [ -n "${BASH_REMATCH[3]}" ]; then
                    placeholder=${BASH_REMATCH[3]}
                    [ -n "${shared[$placeholder]:-}" ] || shared[$placeholder]=$(random_hex 32)
                    value=${shared[$placeholder]}
                else
                    value=$(random_hex 32)
                fi
                printf '%s=%s\n' "$key" "$value" >>"$target"
            else
                printf '%s\n' "$line" >>"$target"
            fi
        done <"$example"
        chmod 600 "$target"
        ok "$target written (secrets generated)"
    done
    if [ -z "$(env_value "$DEPLOY/orchestrator.env" TAMEBI_MODEL_API_KEY)" ]; then
        printf '    note: TAMEBI_MODEL_API_KEY is empty in %s: fill it unless your model server needs no key\n' \
            "$DEPLOY/orchestrator.env"
    fi
}

# ---- setup ---------------------------------------------------------------------------

occ() { $COMPOSE exec -T -u www-data nextcloud php occ "$@"; }

require_env_files() {
    local example
    for example in "$DEPLOY"/*.env.example; do
        [ -f "${example%.example}" ] ||
            die "${example%.example} is missing: run \`bash deploy/setup.sh init\` first"
    done
}

wait_for_nextcloud() {
    say "waiting for Nextcloud to be installed"
    [ -n "$($COMPOSE ps -q nextcloud 2>/dev/null)" ] ||
        die "the nextcloud service is not running: docker compose up -d --build"
    local i
    for i in $(seq 1 120); do
        if occ status --output=json 2>/dev/null | grep -q '"installed":true'; then
            ok "Nextcloud is installed"
            return 0
        fi
        sleep 5
    done
    die "Nextcloud did not finish installing: docker compose logs nextcloud"
}

# enabled, disabled or nothing: from `occ app:list`, whose text output has
# an "Enabled:" and a "Disabled:" section of "  - app: version" lines.
app_state() {
    occ app:list | awk -v app="$1" '
        /^Enabled:/ { section = "enabled" }
        /^Disabled:/ { section = "disabled" }
        $1 == "-" && ($2 == app ":" || $2 == app) { print section; exit }'
}

ensure_app() {
    local app=$1
    case $(app_state "$app") in
        enabled) ok "app $app enabled" ;;
        disabled) occ app:enable "$app" ;;
        # Installs from the app store and enables.
        *) occ app:install "$app" ;;
    esac
}

# A system value, set only when it differs.
ensure_system() {
    local key=$1 value=$2 type=${3:-string} current
    current=$(occ config:system:get "$key" 2>/dev/null || true)
    if [ "$current" = "$value" ]; then
        ok "config.php $key = $value"
    else
        occ config:system:set "$key" --type="$type" --value="$value" >/dev/null
        ok "config.php $key set to $value"
    fi
}

# A user_oidc system value (config.php 'user_oidc' => [...]).
ensure_user_oidc() {
    local key=$1 value=$2 current
    current=$(occ config:system:get user_oidc "$key" 2>/dev/null || true)
    if [ "$current" = "$value" ]; then
        ok "config.php user_oidc.$key = $value"
    else
        occ config:system:set user_oidc "$key" --type=boolean --value="$value" >/dev/null
        ok "config.php user_oidc.$key set to $value"
    fi
}

# An app value, set only when it differs (sensitive ones: always written,
# since occ does not print them back; writing the same value changes nothing).
ensure_app_value() {
    local app=$1 key=$2 value=$3 sensitive=${4:-} current
    if [ -n "$sensitive" ]; then
        occ config:app:set "$app" "$key" --value="$value" --sensitive >/dev/null
        ok "$app $key (sensitive) set"
        return
    fi
    current=$(occ config:app:get "$app" "$key" 2>/dev/null || true)
    if [ "$current" = "$value" ]; then
        ok "$app $key = $value"
    else
        occ config:app:set "$app" "$key" --value="$value" >/dev/null
        ok "$app $key set to $value"
    fi
}

setup() {
    $COMPOSE version >/dev/null 2>&1 ||
        die "'$COMPOSE' does not work here: Docker with the Compose v2 plugin is needed"
    require_env_files

    local jwt_oo jwt_mcp
    jwt_oo=$(env_value "$DEPLOY/onlyoffice.env" JWT_SECRET)
    jwt_mcp=$(env_value "$DEPLOY/mcp-nextcloud.env" ONLYOFFICE_JWT_SECRET)
    [ -n "$jwt_oo" ] && [ "$jwt_oo" = "$jwt_mcp" ] ||
        die "JWT_SECRET (onlyoffice.env) and ONLYOFFICE_JWT_SECRET (mcp-nextcloud.env) must be the same non-empty value"

    wait_for_nextcloud

    # The public URL is the one compose.yaml gave Nextcloud (OVERWRITECLIURL):
    # the OIDC issuer, the redirect URIs' origin, the Nextcloud audience.
    say "the public URL (the iss-mismatch trap: docs/doctor.md, check 2)"
    local public_url public_host
    public_url=$($COMPOSE exec -T nextcloud printenv OVERWRITECLIURL | tr -d '\r')
    public_host=$($COMPOSE exec -T nextcloud printenv OVERWRITEHOST | tr -d '\r')
    [ -n "$public_url" ] && [ -n "$public_host" ] ||
        die "the nextcloud container has no OVERWRITECLIURL/OVERWRITEHOST: is it the compose.yaml of this repository?"
    local effective
    effective=$(occ config:system:get overwritehost 2>/dev/null || true)
    [ "$effective" = "$public_host" ] ||
        die "Nextcloud's overwritehost is '$effective', expected '$public_host' (config/reverse-proxy.config.php reads OVERWRITEHOST)"
    ok "Nextcloud names itself $public_url for every request"

    # Every call this stack needs Nextcloud to make goes to a private
    # address: the token loopback (http://localhost), user_oidc's discovery,
    # webhook deliveries to http://mcp-nextcloud:9101, the document server at
    # http://onlyoffice. Nextcloud's HTTP client refuses those by default.
    ensure_system allow_local_remote_servers true boolean

    say "apps"
    local app
    for app in oidc user_oidc webhook_listeners mail deck calendar contacts onlyoffice tamebi; do
        ensure_app "$app"
    done

    say "OIDC clients (one per audience, RFC 9068 JWT access tokens)"
    local redirect=$public_url/index.php/apps/tamebi/oauth/callback
    if [ ! -f "$CLIENTS_FILE" ]; then
        umask 077
        {
            echo "# Generated by deploy/setup.sh: the Tamebi app's OIDC clients. Keep it."
            for aud in mcp_nextcloud mcp_mail nextcloud; do
                echo "ID_$aud=tamebi-$(random_hex 24)"
                echo "SECRET_$aud=$(random_hex 24)"
            done
            echo "USER_OIDC_SELF_SECRET=$(random_hex 24)"
        } >"$CLIENTS_FILE"
        chmod 600 "$CLIENTS_FILE"
        ok "$CLIENTS_FILE written"
    fi
    local clients_list aud id secret name resource
    clients_list=$(occ oidc:list 2>/dev/null || true)
    for aud in mcp_nextcloud mcp_mail nextcloud; do
        id=$(env_value "$CLIENTS_FILE" "ID_$aud")
        secret=$(env_value "$CLIENTS_FILE" "SECRET_$aud")
        case $aud in
            # The MCP servers' canonical URLs (compose.yaml --canonical-url):
            # each token's aud, checked by the server it is addressed to.
            mcp_nextcloud) name=tamebi-mcp-nextcloud resource=http://mcp-nextcloud:9101/mcp ;;
            mcp_mail) name=tamebi-mcp-mail resource=http://mcp-mail:9102/mcp ;;
            # Nextcloud's own audience: the user_oidc provider's client id.
            nextcloud) name=tamebi-nextcloud resource=$public_url ;;
        esac
        if grep -qF "$id" <<<"$clients_list"; then
            ok "OIDC client $name exists ($id)"
        else
            occ oidc:create "$name" "$redirect" --type=confidential --flow=code \
                --token_type=jwt --resource_url="$resource" \
                --client_id="$id" --client_secret="$secret" >/dev/null
            ok "OIDC client $name created (audience $resource)"
        fi
    done

    say "the Tamebi app's settings"
    ensure_app_value tamebi orchestrator_url http://orchestrator:9100
    ensure_app_value tamebi shared_secret "$(env_value "$DEPLOY/orchestrator.env" TAMEBI_SHARED_SECRET)" sensitive
    # The token loopback: Nextcloud calling itself inside its container.
    ensure_app_value tamebi internal_url http://localhost
    ensure_app_value tamebi redirect_uri "$redirect"
    for aud in mcp_nextcloud mcp_mail nextcloud; do
        ensure_app_value tamebi "client_id_$aud" "$(env_value "$CLIENTS_FILE" "ID_$aud")"
        ensure_app_value tamebi "client_secret_$aud" "$(env_value "$CLIENTS_FILE" "SECRET_$aud")" sensitive
    done

    say "user_oidc: Nextcloud-audience bearers on DAV, OCS and the mail routes"
    # Self-encoded validation with the audience check: a token is accepted
    # only if its aud is the provider's client id (the public URL), so the
    # tokens addressed to the MCP servers are refused by Nextcloud.
    ensure_user_oidc selfencoded_bearer_validation true
    ensure_user_oidc selfencoded_bearer_validation_audience_check true
    # Asking the oidc app instead would accept its tokens of any audience.
    ensure_user_oidc oidc_provider_bearer_validation false
    # A provider whose discovery document is Nextcloud's own (fetched inside
    # the container; its jwks_uri names the public URL, which must answer
    # from there too). The same values every run: nothing changes.
    occ user_oidc:provider nextcloud-self --clientid="$public_url" \
        --clientsecret="$(env_value "$CLIENTS_FILE" USER_OIDC_SELF_SECRET)" \
        --discoveryuri=http://localhost/index.php/.well-known/openid-configuration \
        --check-bearer=1 --bearer-provisioning=0 --unique-uid=0 >/dev/null
    ok "user_oidc provider nextcloud-self (client id $public_url, bearer check on)"

    say "OnlyOffice (browser-facing vs internal URLs)"
    local oo_public=${OO_PUBLIC_URL:-$(env_value .env OO_PUBLIC_URL)}
    oo_public=${oo_public:-http://localhost:8081/}
    ensure_app_value onlyoffice DocumentServerUrl "$oo_public"
    ensure_app_value onlyoffice DocumentServerInternalUrl http://onlyoffice/
    ensure_app_value onlyoffice StorageUrl http://nextcloud/
    ensure_app_value onlyoffice jwt_secret "$jwt_oo" sensitive

    say "the doctor's test user"
    local doctor_user doctor_password
    doctor_user=$(env_value "$DEPLOY/doctor.env" TAMEBI_DOCTOR_USER)
    doctor_password=$(env_value "$DEPLOY/doctor.env" TAMEBI_DOCTOR_PASSWORD)
    if occ user:info "$doctor_user" >/dev/null 2>&1; then
        ok "user $doctor_user exists"
    else
        OC_PASS=$doctor_password $COMPOSE exec -T -u www-data -e OC_PASS nextcloud \
            php occ user:add --password-from-env --display-name="Tamebi doctor" "$doctor_user" >/dev/null
        ok "user $doctor_user created"
    fi

    say "webhooks toward mcp-nextcloud's index (tamebi webhooks register)"
    TAMEBI_WEBHOOK_SECRET=$(env_value "$DEPLOY/mcp-nextcloud.env" TAMEBI_WEBHOOK_SECRET)
    export TAMEBI_WEBHOOK_SECRET
    $COMPOSE run --rm -T -e TAMEBI_WEBHOOK_SECRET tamebi-cli webhooks register

    say "tamebi doctor"
    TAMEBI_OIDC_CLIENTS="mcp-nextcloud=$(env_value "$CLIENTS_FILE" ID_mcp_nextcloud):$(env_value "$CLIENTS_FILE" SECRET_mcp_nextcloud)"
    TAMEBI_OIDC_CLIENTS+=",mcp-mail=$(env_value "$CLIENTS_FILE" ID_mcp_mail):$(env_value "$CLIENTS_FILE" SECRET_mcp_mail)"
    TAMEBI_OIDC_CLIENTS+=",nextcloud=$(env_value "$CLIENTS_FILE" ID_nextcloud):$(env_value "$CLIENTS_FILE" SECRET_nextcloud)"
    TAMEBI_MODEL_URL=$(env_value "$DEPLOY/orchestrator.env" TAMEBI_MODEL_URL)
    TAMEBI_MODEL=$(env_value "$DEPLOY/orchestrator.env" TAMEBI_MODEL)
    TAMEBI_MODEL_API_KEY=$(env_value "$DEPLOY/orchestrator.env" TAMEBI_MODEL_API_KEY)
    ONLYOFFICE_JWT_SECRET=$jwt_mcp
    export TAMEBI_OIDC_CLIENTS TAMEBI_MODEL_URL TAMEBI_MODEL TAMEBI_MODEL_API_KEY ONLYOFFICE_JWT_SECRET
    # A local model server may need no key: pass the variable only when set.
    local key_env=()
    [ -z "$TAMEBI_MODEL_API_KEY" ] || key_env=(-e TAMEBI_MODEL_API_KEY)
    $COMPOSE run --rm -T -e TAMEBI_OIDC_CLIENTS -e TAMEBI_MODEL_URL -e TAMEBI_MODEL \
        "${key_env[@]}" -e ONLYOFFICE_JWT_SECRET tamebi-cli doctor
}

case "${1:-}" in
    init) init ;;
    "") setup ;;
    *) die "usage: bash deploy/setup.sh [init]" ;;
esac
