# dpbandit as a container: a static binary (CGO_ENABLED=0; the SQLite driver,
# modernc.org/sqlite, and the PostgreSQL driver, pgx, are pure Go) on a
# distroless base that holds no shell and no package manager, run as the
# non-root user 65532.
#
#   docker build -t dpbandit .
#   docker run --rm -p 8080:8080 -v dpbandit-data:/data dpbandit
#
# The default command serves on 0.0.0.0:8080 with the SQLite database
# /data/dpbandit.db (the volume); any dpbandit command can be run instead:
#
#   docker run --rm dpbandit version
#   docker run --rm -v "$PWD/out:/out" dpbandit simulate --env bernoulli:0.9,0.5 \
#       --horizon 1e5 --policy ts-gaussian --out /out/e1
#
# deploy/README.md runs the image on Kubernetes (replicas over PostgreSQL,
# sweeps as Indexed Jobs).

ARG GO_VERSION=1.26

FROM golang:${GO_VERSION} AS build
WORKDIR /src
# Module downloads first, cached while only the sources change.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# -buildvcs=false: .git is not in the build context (.dockerignore), so
# `dpbandit version` reports the module version without a VCS revision.
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags="-s -w" -o /out/dpbandit ./cmd/dpbandit \
 && mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/dpbandit /usr/local/bin/dpbandit
# The SQLite database's directory, owned by the nonroot user (65532).
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
WORKDIR /data
VOLUME ["/data"]
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/dpbandit"]
CMD ["serve", "--addr", "0.0.0.0:8080", "--db", "/data/dpbandit.db"]
