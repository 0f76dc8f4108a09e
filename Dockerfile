# syntax=docker/dockerfile:1
#
# shardgate's container image: `make image` (docker or podman).
#
#   build    Go toolchain: terraform 1.5.7 built from source with `go install`
#            (no prebuilt download), then shardgate with -trimpath and the
#            commit (--build-arg COMMIT=..., as `make build` sets it).
#   runtime  debian:bookworm-slim with what runs at serve time and nothing
#            else: the two binaries, CA certificates (GitHub, coordinators over
#            TLS), and sh + curl, which the stream-group module's apply.sh runs
#            as a local-exec provisioner. Runs as an unprivileged user.
#
# Configuration, the App key and the secrets are mounted, never built in:
#   docker run -v /etc/shardgate:/etc/shardgate:ro -v shardgate-data:/var/lib/shardgate \
#     -p 8080:8080 shardgate:TAG
# with /etc/shardgate/config.yaml (docs/config.md) whose store.path is under
# /var/lib/shardgate, e.g. /var/lib/shardgate/shardgate.db.

ARG GO_VERSION=1.26.8
ARG DEBIAN_RELEASE=bookworm

FROM golang:${GO_VERSION}-${DEBIAN_RELEASE} AS build
ARG TERRAFORM_VERSION=1.5.7
# Static binaries, no VCS stamping (.git is not in the build context; the
# commit comes in as a build argument).
ENV CGO_ENABLED=0 GOFLAGS=-buildvcs=false
# terraform first: this layer is reused until TERRAFORM_VERSION changes.
RUN GOBIN=/out go install -trimpath "github.com/hashicorp/terraform@v${TERRAFORM_VERSION}" \
    && /out/terraform version | head -n 1 | grep -q "v${TERRAFORM_VERSION}"
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG COMMIT=unknown
RUN go build -trimpath -ldflags "-X main.commit=${COMMIT}" -o /out/shardgate ./cmd/shardgate \
    && /out/shardgate version

FROM debian:${DEBIAN_RELEASE}-slim AS runtime
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates curl \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 shardgate \
    && useradd --system --uid 10001 --gid shardgate --home-dir /var/lib/shardgate \
        --no-create-home --shell /usr/sbin/nologin shardgate \
    && install -d -o shardgate -g shardgate -m 0700 /var/lib/shardgate \
    && install -d -m 0755 /etc/shardgate
COPY --from=build /out/terraform /out/shardgate /usr/local/bin/
USER shardgate:shardgate
# HOME for terraform's CLI configuration and the provider plugin cache.
ENV HOME=/var/lib/shardgate
WORKDIR /var/lib/shardgate
VOLUME ["/var/lib/shardgate"]
# listen (webhooks) and, when configured, admin.listen (metrics, backups).
EXPOSE 8080 9091
ENTRYPOINT ["/usr/local/bin/shardgate"]
CMD ["serve", "--config", "/etc/shardgate/config.yaml"]
