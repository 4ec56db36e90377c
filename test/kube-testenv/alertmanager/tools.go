//go:build tools

// Pins github.com/prometheus/alertmanager/cmd/alertmanager in this module; build-alertmanager.sh
// builds it with `go build github.com/prometheus/alertmanager/cmd/alertmanager`.
package tools

import _ "github.com/prometheus/alertmanager/cmd/alertmanager"
