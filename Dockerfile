# The segdiff CLI as an image. The Kurtosis package runs `segdiff load` from
# it as the segdiff-load service when a network-params file has a
# segdiff.load section (its default image, segdiff/segdiff:latest); build it
# with `make load-image` before `make devnet-up`.
ARG GO_VERSION=1.26
FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# Static: go-ethereum's signing falls back to pure Go without cgo.
RUN CGO_ENABLED=0 go build -trimpath -o /out/segdiff ./cmd/segdiff

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/segdiff /usr/local/bin/segdiff
ENTRYPOINT ["/usr/local/bin/segdiff"]
