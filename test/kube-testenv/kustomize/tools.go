//go:build tools

// Pins sigs.k8s.io/kustomize/kustomize/v5 (the kustomize CLI) in this module; build.sh builds it
// with `go build sigs.k8s.io/kustomize/kustomize/v5`.
package tools

import _ "sigs.k8s.io/kustomize/kustomize/v5"
