//go:build tools

// Pins helm.sh/helm/v4/cmd/helm in this module; build.sh builds it with
// `go build helm.sh/helm/v4/cmd/helm`.
package tools

import _ "helm.sh/helm/v4/cmd/helm"
