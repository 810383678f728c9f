package httpapi

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"go.uber.org/zap"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
)

// Authenticator tells which owner a request acts for. The owner domain's
// adapter implements it (API key bearer or session cookie with CSRF check).
// It returns a domain error of kind Unauthorized when there are no or bad
// credentials.
type Authenticator interface {
	Authenticate(r *http.Request) (op.Caller, error)
}

// AuthenticatorFunc adapts a function to Authenticator.
type AuthenticatorFunc func(r *http.Request) (op.Caller, error)

// Authenticate calls f.
func (f AuthenticatorFunc) Authenticate(r *http.Request) (op.Caller, error) { return f(r) }

// EchoPath turns an op path ("/api/admin/webhooks/{id}") into Echo's syntax
// ("/api/admin/webhooks/:id").
func EchoPath(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '{':
			b.WriteByte(':')
		case '}':
		default:
			b.WriteByte(p[i])
		}
	}
	return b.String()
}

// MountOps registers the REST projection of every op: one route per op (its
// line of the route table, Routes), its input bound from the JSON body, then
// `path` and `query` tagged fields, its output written as JSON with the
// route's success status (an op.Empty output is answered with no body). This
// is the only place REST routes for ops are written.
func MountOps(e *echo.Echo, eps Endpoints, auth Authenticator, logger *zap.Logger) {
	for _, ep := range eps {
		d, r := ep.Descriptor, ep.Route
		m := d.Meta()
		e.Add(r.Method, EchoPath(r.Path), func(c echo.Context) error {
			var caller op.Caller
			if !m.Public {
				var err error
				caller, err = auth.Authenticate(c.Request())
				if err != nil {
					return WriteError(c, logger, err)
				}
			}
			if m.MaxBodyBytes > 0 && c.Request().Body != nil {
				c.Request().Body = http.MaxBytesReader(c.Response(), c.Request().Body, m.MaxBodyBytes)
			}
			in := d.NewInput()
			if err := BindInput(c, in); err != nil {
				return WriteError(c, logger, err)
			}
			out, err := d.Call(c.Request().Context(), caller, in)
			if err != nil {
				return WriteError(c, logger, err)
			}
			if _, empty := out.(op.Empty); empty {
				status := r.SuccessStatus()
				if status == http.StatusOK {
					status = http.StatusNoContent
				}
				return c.NoContent(status)
			}
			if r, ok := out.(op.Replayer); ok && r.Replayed() {
				return c.JSON(http.StatusOK, out)
			}
			return c.JSON(r.SuccessStatus(), out)
		})
	}
}

// BindInput fills the struct in points to: the JSON body first (through
// op.DecodeJSON, the gate every surface shares: valid UTF-8, one JSON value
// and nothing after it, unknown fields refused), then the fields tagged
// `path` and `query`, which win. The op checks the bound strings and ranges
// itself when called (op.Check).
func BindInput(c echo.Context, in any) error {
	req := c.Request()
	if req.Body != nil && req.Method != http.MethodGet && req.Method != http.MethodDelete {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			var maxErr *http.MaxBytesError
			if errors.As(err, &maxErr) {
				return domain.TooLarge("PAYLOAD_TOO_LARGE", "request body is over the limit")
			}
			return domain.Validation("BAD_REQUEST", "cannot read the request body")
		}
		if err := op.DecodeJSON(body, in); err != nil {
			return err
		}
	}
	return bindTagged(reflect.ValueOf(in).Elem(), c)
}

var uuidType = reflect.TypeFor[uuid.UUID]()

// InputFields lists the fields of an op's input struct t with those of its
// embedded structs in their place, as BindInput and encoding/json see them
// (none when t is not a struct); the projections that describe an input
// (OpenAPI, the op fuzz harness) walk the same fields.
func InputFields(t reflect.Type) []reflect.StructField {
	if t.Kind() != reflect.Struct {
		return nil
	}
	var out []reflect.StructField
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			out = append(out, InputFields(f.Type)...)
			continue
		}
		out = append(out, f)
	}
	return out
}

func bindTagged(v reflect.Value, c echo.Context) error {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		fv := v.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			if err := bindTagged(fv, c); err != nil {
				return err
			}
			continue
		}
		if name, ok := f.Tag.Lookup("path"); ok {
			raw := c.Param(name)
			if err := setField(fv, raw); err != nil {
				// A malformed id names nothing that exists.
				return domain.NotFound("NOT_FOUND", "no such "+name)
			}
			continue
		}
		if name, ok := f.Tag.Lookup("query"); ok {
			raw := c.QueryParam(name)
			if raw == "" {
				continue
			}
			if err := setField(fv, raw); err != nil {
				return domain.Validation("INVALID_QUERY", fmt.Sprintf("query parameter %s: %v", name, err)).WithField(name)
			}
		}
	}
	return nil
}

func setField(fv reflect.Value, raw string) error {
	if fv.Type() == uuidType {
		id, err := uuid.Parse(raw)
		if err != nil {
			return fmt.Errorf("not a valid id")
		}
		fv.Set(reflect.ValueOf(id))
		return nil
	}
	switch fv.Kind() {
	case reflect.String:
		fv.SetString(raw)
	case reflect.Int, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			return fmt.Errorf("want an integer")
		}
		fv.SetInt(n)
	case reflect.Bool:
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return fmt.Errorf("want true or false")
		}
		fv.SetBool(b)
	case reflect.Pointer:
		nv := reflect.New(fv.Type().Elem())
		if err := setField(nv.Elem(), raw); err != nil {
			return err
		}
		fv.Set(nv)
	default:
		return fmt.Errorf("unsupported parameter type %s", fv.Type())
	}
	return nil
}
