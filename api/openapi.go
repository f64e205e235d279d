package api

import _ "embed"

// OpenAPI is the HTTP decision service's contract, the OpenAPI 3 document
// api/openapi.yaml. The service validates requests against it and serves it
// at GET /openapi.yaml; it is the only copy. Callers must not modify it.
//
//go:embed openapi.yaml
var OpenAPI []byte
