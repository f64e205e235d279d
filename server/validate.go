package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/dpbandit/dpbandit/api"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// openapiYAML is the API contract, api/openapi.yaml (embedded by package
// api: the one copy).
var openapiYAML = api.OpenAPI

// validator checks requests against the OpenAPI document with kin-openapi.
type validator struct {
	doc    *openapi3.T
	router routers.Router
}

func newValidator() (*validator, error) {
	l := openapi3.NewLoader()
	doc, err := l.LoadFromData(openapiYAML)
	if err != nil {
		return nil, err
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, err
	}
	r, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, err
	}
	return &validator{doc: doc, router: r}, nil
}

// check validates the request (whose body has been read into body) and
// returns a 400 naming the offending field.
func (v *validator) check(r *http.Request, body []byte) *apiError {
	rr := r.Clone(r.Context())
	rr.Body = io.NopCloser(bytes.NewReader(body))
	if rr.Header.Get("Content-Type") == "" || len(body) > 0 && !strings.Contains(rr.Header.Get("Content-Type"), "json") {
		rr.Header.Set("Content-Type", "application/json")
	}
	route, params, err := v.router.FindRoute(rr)
	if err != nil {
		return errf(http.StatusNotFound, "not_found", fmt.Sprintf("no API route %s %s", r.Method, r.URL.Path))
	}
	in := &openapi3filter.RequestValidationInput{Request: rr, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: false}}
	if err := openapi3filter.ValidateRequest(r.Context(), in); err != nil {
		return errf(http.StatusBadRequest, "invalid_request", specMessage(err))
	}
	return nil
}

// specMessage turns a kin-openapi error into one line naming the field.
func specMessage(err error) string {
	var re *openapi3filter.RequestError
	if errors.As(err, &re) {
		var se *openapi3.SchemaError
		if errors.As(re.Err, &se) {
			// A schema wrapped in allOf/anyOf (e.g. a nullable budget)
			// fails with "doesn't match all schemas"; the inner error
			// names the field (its path is the whole path) and the rule.
			path := se.JSONPointer()
			for {
				var inner *openapi3.SchemaError
				if se.Origin == nil || !errors.As(se.Origin, &inner) {
					break
				}
				if p := inner.JSONPointer(); len(p) >= len(path) {
					path = p
				}
				se = inner
			}
			field := strings.Join(path, ".")
			if field == "" {
				field = "the body"
			}
			return fmt.Sprintf("%s: %s (see api/openapi.yaml)", field, se.Reason)
		}
		if re.RequestBody != nil && re.Err != nil {
			msg := re.Err.Error()
			if strings.Contains(msg, "value is required but missing") {
				return "the request body is required: send a JSON object"
			}
			return "request body: " + firstLine(msg)
		}
		return firstLine(re.Error())
	}
	return firstLine(err.Error())
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// readValidated reads the body (within the size limit), decodes it
// strictly into v (our messages name the field and the valid form) and
// then validates the request against the OpenAPI document (its bounds).
func (s *Server) readValidated(r *http.Request, v any, allowEmpty bool) *apiError {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return errf(http.StatusRequestEntityTooLarge, "body_too_large", fmt.Sprintf("the request body exceeds %d bytes; send smaller batches", mbe.Limit))
		}
		return errf(http.StatusBadRequest, "bad_body", "reading the request body failed: "+err.Error())
	}
	if len(bytes.TrimSpace(b)) > 0 {
		if e := decodeSyntax(b); e != nil {
			return e
		}
	}
	if e := decodeBytes(b, v, allowEmpty); e != nil {
		return e
	}
	return s.spec.check(r, b)
}

// decodeSyntax reports JSON syntax errors with our message before the
// validator reports them with its own.
func decodeSyntax(b []byte) *apiError {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // numbers stay text: 1e309 is a syntax-valid number, judged later by its field
	var v any
	if err := dec.Decode(&v); err != nil {
		return jsonErr(err)
	}
	if dec.More() {
		return errf(http.StatusBadRequest, "bad_body", "the body has data after the JSON object: send exactly one object")
	}
	return nil
}
