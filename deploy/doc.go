// Package deploy holds no Go code: the container image (Dockerfile) and
// the Kubernetes manifests (k8s/) of a `secexec serve` fleet. Its tests
// decode the manifests strictly into the Kubernetes API types and check
// that they agree with each other and with the serve command's flags.
package deploy
