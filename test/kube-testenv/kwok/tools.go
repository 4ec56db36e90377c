//go:build tools

// Pins sigs.k8s.io/kwok/cmd/kwok in this module; build.sh builds it with
// `go build sigs.k8s.io/kwok/cmd/kwok`.
package tools

import _ "sigs.k8s.io/kwok/cmd/kwok"
