# syntax=docker/dockerfile:1
#
# One image, one binary: `tamebi`. Each service of compose.yaml (and
# compose.fake.yaml) is this image with another subcommand, so the model key
# (orchestrator) and workspace access (mcp-nextcloud, mcp-mail) still live in
# different containers. Operating manual: docs/compose.md.

# ---- build -------------------------------------------------------------------
FROM rust:1-bookworm AS build
# reqwest uses native-tls (the system's OpenSSL): see ARCHITECTURE.md.
RUN apt-get update \
    && apt-get install -y --no-install-recommends libssl-dev pkg-config \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src

# The dependency layer: the manifests alone, with empty sources, so editing
# our code does not rebuild the ~300 crates we depend on. One line per crate
# (ci/compose/check.py fails when a crate of the workspace is missing here).
COPY Cargo.toml Cargo.lock rustfmt.toml ./
COPY crates/access-token/Cargo.toml crates/access-token/
COPY crates/agent/Cargo.toml crates/agent/
COPY crates/extract/Cargo.toml crates/extract/
COPY crates/fake-model/Cargo.toml crates/fake-model/
COPY crates/fake-nextcloud/Cargo.toml crates/fake-nextcloud/
COPY crates/http-serve/Cargo.toml crates/http-serve/
COPY crates/mcp-auth/Cargo.toml crates/mcp-auth/
COPY crates/mcp-kit/Cargo.toml crates/mcp-kit/
COPY crates/mcp-mail/Cargo.toml crates/mcp-mail/
COPY crates/mcp-nextcloud/Cargo.toml crates/mcp-nextcloud/
COPY crates/nextcloud-contract/Cargo.toml crates/nextcloud-contract/
COPY crates/orchestrator/Cargo.toml crates/orchestrator/
COPY crates/scenario/Cargo.toml crates/scenario/
COPY crates/sqlite-db/Cargo.toml crates/sqlite-db/
COPY crates/system/Cargo.toml crates/system/
COPY crates/wire/Cargo.toml crates/wire/
COPY crates/xml-tree/Cargo.toml crates/xml-tree/
RUN for crate in crates/*/; do mkdir -p "$crate/src" && : > "$crate/src/lib.rs"; done \
    && rm crates/system/src/lib.rs \
    && echo 'fn main() {}' > crates/system/src/main.rs \
    && mkdir -p crates/system/tests \
    && echo 'fn main() {}' > crates/system/tests/scenarios.rs \
    && cargo build --release --locked --bin tamebi \
    && rm -rf crates

# Our sources. COPY keeps the files' own modification times, which can be
# older than the stand-ins above: touch them so cargo rebuilds our crates.
COPY crates crates
RUN find crates -type f -exec touch {} + \
    && cargo build --release --locked --bin tamebi \
    && install -m 0755 target/release/tamebi /usr/local/bin/tamebi

# ---- runtime -----------------------------------------------------------------
FROM debian:bookworm-slim AS runtime
# ca-certificates for https to a hosted model provider or a remote Nextcloud;
# libssl3 because the binary links the system's OpenSSL (native-tls).
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates libssl3 \
    && rm -rf /var/lib/apt/lists/*
# A fixed, non-root uid: the named volumes below are created owned by it,
# and with these folders' mode 0700 (Docker copies both into a new volume):
# the databases hold users' document text and conversations, for no other
# account to read (the services create their files 0600 besides).
RUN groupadd --system --gid 10001 tamebi \
    && useradd --system --uid 10001 --gid tamebi --home-dir /var/lib/tamebi --shell /usr/sbin/nologin tamebi \
    && mkdir -p /var/lib/tamebi/orchestrator /var/lib/tamebi/index \
    && chown -R tamebi:tamebi /var/lib/tamebi \
    && chmod 0700 /var/lib/tamebi /var/lib/tamebi/orchestrator /var/lib/tamebi/index
COPY --from=build /usr/local/bin/tamebi /usr/local/bin/tamebi
COPY deploy/healthcheck.sh /usr/local/bin/tamebi-healthcheck
USER 10001:10001
WORKDIR /var/lib/tamebi
ENTRYPOINT ["tamebi"]
CMD ["--help"]
