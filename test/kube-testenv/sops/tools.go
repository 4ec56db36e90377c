//go:build tools

// Pins github.com/getsops/sops/v3/cmd/sops and, from the age module sops itself requires,
// filippo.io/age/cmd/age-keygen (docs/operations.md's setup makes the key with it) in this
// module; build-sops.sh builds both with `go build`.
package tools

import (
	_ "filippo.io/age/cmd/age-keygen"
	_ "github.com/getsops/sops/v3/cmd/sops"
)
