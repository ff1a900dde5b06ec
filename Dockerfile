# agentckpt container image: built on Debian 12 with Debian's own -dev packages, run on
# debian:12-slim with only the shared libraries the binary needs, as a non-root user (UID 10001)
# that needs no writable path but /var/lib/agentckpt, so the root filesystem can be read-only.
# The build stage needs node and npm: it installs js-tiktoken (npm ci) and embeds its rank tables.
#
#   scripts/image                      # here: Debian base images by debootstrap, podman build, test
#   docker build -t registry.example.com/agentckpt:0.1.0 .
#   docker run --rm registry.example.com/agentckpt:0.1.0 --help
#
# A plain Release build: compiler warnings do not fail it; CI builds the same configuration
# with --build-arg AGENTCKPT_WERROR=ON.

FROM debian:12 AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      build-essential cmake pkg-config git ca-certificates \
      libnats-dev libcpprest-dev nlohmann-json3-dev libssl-dev libspdlog-dev \
      libsqlite3-dev libsimdjson-dev libgit2-dev libcli11-dev libgtest-dev libgmock-dev \
      libpcre2-dev libboost-dev nodejs npm \
 && rm -rf /var/lib/apt/lists/*
ARG AGENTCKPT_WERROR=OFF
# A CA bundle for npm (the token tables' `npm ci`) when the registry is reached through a proxy
# with its own CA: scripts/image mounts the host's bundle here. Empty: the image's own CAs.
ARG NPM_CA_FILE=
WORKDIR /src
COPY . .
RUN if [ -n "$NPM_CA_FILE" ]; then \
      export NODE_EXTRA_CA_CERTS="$NPM_CA_FILE" npm_config_cafile="$NPM_CA_FILE"; \
    fi \
 && cmake -S . -B /build -DCMAKE_BUILD_TYPE=Release -DAGENTCKPT_BUILD_BENCH=OFF \
      -DAGENTCKPT_WERROR="${AGENTCKPT_WERROR}" \
 && cmake --build /build --target agentckpt -j"$(nproc)" \
 && strip /build/bin/agentckpt

FROM debian:12-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      ca-certificates libnats3.4 libcpprest2.10 libssl3 libspdlog1.10 libfmt9 libsqlite3-0 \
      libsimdjson14 libgit2-1.5 libpcre2-8-0 \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 agentckpt \
 && useradd --system --uid 10001 --gid 10001 --home-dir /var/lib/agentckpt --no-create-home \
      --shell /usr/sbin/nologin agentckpt \
 && install -d -o 10001 -g 10001 -m 0750 /var/lib/agentckpt
COPY --from=build /build/bin/agentckpt /usr/local/bin/agentckpt
# Numeric, so Kubernetes can verify runAsNonRoot without a runAsUser.
USER 10001:10001
WORKDIR /var/lib/agentckpt
EXPOSE 8787
ENTRYPOINT ["/usr/local/bin/agentckpt"]
CMD ["run"]
