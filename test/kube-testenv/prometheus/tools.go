//go:build tools

// Pins github.com/prometheus/prometheus/cmd/prometheus in this module; build-prometheus.sh
// builds it with `go build github.com/prometheus/prometheus/cmd/prometheus`.
package tools

import _ "github.com/prometheus/prometheus/cmd/prometheus"
