module github.com/rcp-sidecar/rcp-sidecar

go 1.26
