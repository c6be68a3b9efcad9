# cited in one image: the server binary and its site files (wasm, JS, CSS, icons).
#   docker build -t cited .
# The build runs the same make targets as `make run` (site-release, server-release).

FROM docker.io/library/rust:1.95-bookworm AS build
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends brotli python3 python3-pip \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
ENV CARGO_TARGET_DIR=/src/target/cargo
RUN make site-release server-release

FROM docker.io/library/debian:bookworm-slim
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --create-home --home-dir /var/lib/cited cited
COPY --from=build /src/target/cargo/release/cited /usr/local/bin/cited
COPY --from=build /src/target/site /usr/share/cited/site
ENV CITED_SITE_ROOT=/usr/share/cited/site \
    CITED_ADDR=0.0.0.0:3000 \
    XDG_DATA_HOME=/var/lib/cited
USER cited
WORKDIR /var/lib/cited
EXPOSE 3000
ENTRYPOINT ["cited"]
CMD ["serve"]
