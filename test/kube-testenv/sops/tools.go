//go:build tools

// Pins github.com/getsops/sops/v3/cmd/sops in this module; build-sops.sh builds it with
// `go build github.com/getsops/sops/v3/cmd/sops`.
package tools

import _ "github.com/getsops/sops/v3/cmd/sops"
