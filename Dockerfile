# syntax=docker/dockerfile:1
#
# The `toolscan` binary in a small image, running the proxy by default:
#
#   docker build -t toolscan .
#   docker run --rm -p 8080:8080 -e TOOLSCAN_UPSTREAM=http://host:8000 toolscan
#
# Any other command works too: `docker run --rm -i toolscan parse - < answer.txt`.

# ---- builder: the official Rust image (the workspace's MSRV or newer).
ARG RUST_VERSION=1.89
FROM rust:${RUST_VERSION}-bookworm AS builder
WORKDIR /src
COPY . .
# The registry and target/ are cache mounts (BuildKit): a rebuild after a
# source change does not fetch or recompile the dependencies again.
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked -p toolscan-cli \
    && install -m 0755 target/release/toolscan /usr/local/bin/toolscan

# ---- runtime: glibc and libgcc only (TLS is rustls with its own roots:
# no OpenSSL, no CA bundle needed), no shell, runs as uid 65532 `nonroot`.
FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=builder /usr/local/bin/toolscan /usr/local/bin/toolscan
# The numeric id of distroless's `nonroot` (hadolint DL3066: a name needs
# the image's /etc/passwd to mean anything, and Kubernetes' runAsNonRoot
# can only check a number).
USER 65532:65532
# Inside a container the proxy listens on every interface (its default,
# loopback, cannot be reached through a published port), also when the
# command is replaced (`docker run … toolscan proxy --upstream URL`).
ENV TOOLSCAN_LISTEN=0.0.0.0:8080
EXPOSE 8080
# The proxy's own `/health` on its port (exec form: distroless has no
# shell; `toolscan health URL` exits 0 on a 2xx answer, 1 otherwise).
HEALTHCHECK --interval=30s --timeout=5s --start-period=5s --retries=3 \
    CMD ["toolscan", "health", "--timeout", "4", "http://127.0.0.1:8080/health"]
ENTRYPOINT ["toolscan"]
# The upstream comes from TOOLSCAN_UPSTREAM (`-e TOOLSCAN_UPSTREAM=URL`);
# every other proxy flag has its TOOLSCAN_* variable too. Arguments after
# the image name replace this CMD.
CMD ["proxy", "--listen", "0.0.0.0:8080"]
