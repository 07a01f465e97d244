# toolpick in a container: a multi-stage build, the binary alone (the bundled suite is inside it)
# plus CA certificates and the OpenSSL runtime it links (reqwest's native-tls), run as a non-root user.
#   docker build -t toolpick . && docker run --rm -v "$PWD/reports:/home/toolpick/reports" toolpick run
# Checked here with hadolint (tests/packaging.rs); `docker build` itself cannot run on the development
# machine, so the image is built for the first time by .github/workflows/release.yml.

FROM rust:1.95-slim-bookworm AS build
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends pkg-config libssl-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cargo build --profile dist --locked --bin toolpick \
 && strip target/dist/toolpick

FROM debian:bookworm-slim
# Unpinned on purpose: the distribution's current security fixes for the two runtime libraries.
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates libssl3 \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 10001 toolpick \
 && useradd --uid 10001 --gid 10001 --create-home toolpick
COPY --from=build /src/target/dist/toolpick /usr/local/bin/toolpick
USER 10001:10001
WORKDIR /home/toolpick
ENTRYPOINT ["toolpick"]
CMD ["run"]
