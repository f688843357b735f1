// Package deploy holds the deployment artefacts' tests: the repository's
// Dockerfile and docker-compose.yml, the compose configuration under
// deploy/compose, the Kubernetes example under deploy/kubernetes and the
// Helm chart under deploy/helm are parsed and checked for the invariants an
// operator relies on (health checks everywhere, non-root, valid sidecar
// configuration, probes on /readyz and /healthz). The chart is linted,
// rendered in each shape and validated against the Kubernetes OpenAPI
// schemas with the tools integration/helm/setup.sh installs. The package
// has no non-test code.
package deploy
