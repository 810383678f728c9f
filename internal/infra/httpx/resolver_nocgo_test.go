//go:build !cgo || netgo

package httpx

// cgoResolver reports that package net was built with the cgo (libc)
// resolver, so GODEBUG=netdns=cgo selects it.
const cgoResolver = false
