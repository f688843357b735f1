# syntax=docker/dockerfile:1
#
# rcp-sidecar container image: a static binary on an empty base, run as an
# unprivileged user. Build with
#   docker build --build-arg VERSION=$(git describe --tags --always) -t rcp-sidecar .
# Multi-arch, with BuildKit's SBOM and provenance attestations, pushed to
# your registry (the Go compiler cross-compiles on the build machine's
# platform, so no emulation is needed):
#   docker buildx build --platform linux/amd64,linux/arm64 \
#     --build-arg VERSION=$(git describe --tags --always) \
#     --sbom=true --provenance=mode=max \
#     -t <registry>/rcp-sidecar:<version> --push .
# A CycloneDX SBOM of the binary itself (its embedded module list):
#   cyclonedx-gomod bin -json -output rcp-sidecar.cdx.json <binary>
# The image serves HTTP on :8080 when the configuration says
# server.http.listen: 0.0.0.0:8080 (the default, 127.0.0.1:8080, is only
# reachable from inside the container's network namespace, which is what a
# Kubernetes sidecar wants). Mount the configuration at
# /etc/rcp-sidecar/config.yaml or pass --config.

ARG GO_VERSION=1.26

FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS build
ARG TARGETOS
ARG TARGETARCH
ARG VERSION=dev
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
# CGO off: a fully static binary that needs no libc in the final image.
# -trimpath drops build paths; -X stamps `rcp-sidecar version`.
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
	CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath \
		-ldflags "-s -w -X main.version=${VERSION}" -o /out/rcp-sidecar ./cmd/rcp-sidecar && \
	CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath \
		-ldflags "-s -w" -o /out/rcp-healthcheck ./deploy/healthcheck

FROM scratch
ARG VERSION=dev
LABEL org.opencontainers.image.title="rcp-sidecar" \
	org.opencontainers.image.description="Retrieval Context Protocol (RCP/1) sidecar for Elasticsearch, OpenSearch and Qdrant" \
	org.opencontainers.image.version="${VERSION}"
# CA certificates for https engine URLs and embedding endpoints.
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/rcp-sidecar /out/rcp-healthcheck /usr/local/bin/
# 65532 is the conventional "nonroot" uid/gid; nothing in the image is
# writable or needs to be.
USER 65532:65532
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=4s --start-period=30s --retries=3 \
	CMD ["/usr/local/bin/rcp-healthcheck", "http://127.0.0.1:8080/readyz"]
ENTRYPOINT ["/usr/local/bin/rcp-sidecar", "serve"]
CMD ["--config", "/etc/rcp-sidecar/config.yaml"]
