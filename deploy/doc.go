// Package deploy holds the deployment artefacts' tests: the repository's
// Dockerfile and docker-compose.yml, the compose configuration under
// deploy/compose and the Kubernetes example under deploy/kubernetes are
// parsed and checked for the invariants an operator relies on (health
// checks everywhere, non-root, valid sidecar configuration, probes on
// /readyz and /healthz). The package has no non-test code.
package deploy
