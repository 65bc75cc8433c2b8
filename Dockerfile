# fusebox in a container: built on Debian 12, run on debian:12-slim with only
# the runtime libraries (the Depends of the .deb, docs/install.md).
#   docker build -t fusebox .
#   docker run --rm fusebox run ratelimit/retry_after_seconds
#   docker run --rm -v "$PWD:/work" -w /work fusebox exec transient/http_503 -- ./client.sh
# tests/cli/dockerfile.sh runs the build stage's script on the host and
# checks the runtime package list against what the binary links.

FROM debian:12 AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends build-essential cmake pkg-config \
      libmicrohttpd-dev libcurl4-openssl-dev libssl-dev libcjson-dev liblua5.4-dev libcunit1-dev libhiredis-dev libnghttp2-dev zlib1g-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY CMakeLists.txt README.md ./
COPY cli cli
COPY guard guard
COPY import import
COPY reports reports
COPY sim sim
COPY tests tests
COPY scenarios scenarios
COPY profiles profiles
COPY integrations/README.md integrations/README.md
COPY integrations/pytest integrations/pytest
COPY integrations/node integrations/node
COPY docs docs
COPY scripts/docker-build-stage.sh scripts/
RUN bash scripts/docker-build-stage.sh /out/usr/local /tmp/build

FROM debian:12-slim
# runtime: libcjson1 libcurl4 libhiredis0.14 liblua5.4-0 libmicrohttpd12 libnghttp2-14 libssl3 zlib1g (libc6 is in the base)
RUN apt-get update \
 && apt-get install -y --no-install-recommends libcjson1 libcurl4 libhiredis0.14 liblua5.4-0 libmicrohttpd12 libnghttp2-14 libssl3 zlib1g \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/usr/local /usr/local
RUN fusebox --version
WORKDIR /work
ENTRYPOINT ["fusebox"]
CMD ["--help"]
