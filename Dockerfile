# svc as a container: a release build, then a small runtime image that runs as a non-root user.
# (No Docker engine runs on our CI machines: what this image ships, the binary, config/ and
# deploy/nginx/svc.conf, is what tests/tests/blackbox/behind_nginx.rs runs there.)
#
#   docker build -t svc .
#   docker run -p 6781:6781 -v svc-data:/var/lib/svc svc          # SQLite, strict (pair code in the log)
#   docker compose -f deploy/compose.yaml up                       # two replicas, PostgreSQL, nginx
#
# The release profile links the binary as one program (fat LTO, Cargo.toml): the build stage
# needs about 3.3 GB of memory at its final link and about 13 minutes on 2 cores.

FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p svc \
    && strip target/release/svc

FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates curl \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home-dir /var/lib/svc --create-home svc
COPY --from=build /src/target/release/svc /usr/local/bin/svc
COPY config/ /etc/svc/
USER svc
WORKDIR /var/lib/svc
VOLUME ["/var/lib/svc"]
EXPOSE 6781
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s \
    CMD curl -fsS http://127.0.0.1:6781/healthz || exit 1
# SIGTERM: /readyz answers 503 at once, requests in progress finish within a 10 s grace (new
# connections get only the health probes), then the process exits 0.
STOPSIGNAL SIGTERM
ENTRYPOINT ["svc"]
CMD ["serve", "--host", "0.0.0.0", "--data-dir", "/var/lib/svc"]
