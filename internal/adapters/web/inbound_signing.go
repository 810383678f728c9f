package web

import (
	"fmt"
	"strings"

	"github.com/standmeet/standmeet/internal/owner/inbound/verifier"
)

// signingHelp tells a sender how to sign for a source: the headers, what
// the signature covers, the timestamp window, and a shell example (bash,
// openssl, curl) that posts one signed message to the receive URL.
type signingHelp struct {
	Headers []headerHelp
	// Signed is what the HMAC-SHA256 covers and how it is encoded.
	Signed string
	// Tolerance is the timestamp window, or how replays are refused when
	// the kind signs no timestamp.
	Tolerance string
	// Example is the script; SECRET is the one line a sender fills in.
	Example string
}

// headerHelp is one header a sender sends.
type headerHelp struct{ Name, Value string }

// exampleBody is the JSON body of every example: a "type" member, so the
// message's provider type shows where the kind reads it from the body.
const exampleBody = `{"type":"order.created","id":"ord_1"}`

// signingOf describes how src's sender signs; url is its receive URL.
func signingOf(src source, url string) signingHelp {
	tol := fmt.Sprintf("the timestamp must be within %d s of the server's clock, both ways; a message id seen within that window (and the inbox's retention) is a duplicate", src.ToleranceSeconds)
	head := "SECRET='paste the secret here'\nBODY='" + exampleBody + "'\n"
	post := "curl -sS -X POST '" + url + "' -H 'Content-Type: application/json'"
	switch src.Verifier {
	case verifier.KindStandardWebhooks:
		return signingHelp{
			Headers: []headerHelp{
				{"webhook-id", "the message's unique id; a resend keeps it"},
				{"webhook-timestamp", "Unix seconds when it was signed"},
				{"webhook-signature", "v1,<base64 of the HMAC-SHA256>; several space-separated signatures are allowed"},
			},
			Signed:    "HMAC-SHA256 of <webhook-id>.<webhook-timestamp>.<raw body>, keyed with the base64-decoded secret after its whsec_ prefix (Standard Webhooks v1)",
			Tolerance: tol,
			Example: head + "ID=\"msg_$(date +%s%N)\"\nTS=$(date +%s)\n" +
				"KEY=$(printf %s \"${SECRET#whsec_}\" | base64 -d | od -An -v -tx1 | tr -d ' \\n')\n" +
				"SIG=$(printf '%s.%s.%s' \"$ID\" \"$TS\" \"$BODY\" | openssl dgst -sha256 -mac HMAC -macopt \"hexkey:$KEY\" -binary | base64 -w0)\n" +
				post + " -H \"webhook-id: $ID\" -H \"webhook-timestamp: $TS\" -H \"webhook-signature: v1,$SIG\" --data-binary \"$BODY\"\n",
		}
	case verifier.KindGitHub:
		return signingHelp{
			Headers: []headerHelp{
				{verifier.HeaderGitHubSignature, "sha256=<hex of the HMAC-SHA256>"},
				{verifier.HeaderGitHubDelivery, "the delivery's GUID: the message id (a redelivery keeps it)"},
				{verifier.HeaderGitHubEvent, "the event name, kept as the message's provider type"},
			},
			Signed:    "HMAC-SHA256 of the raw body, keyed with the secret as typed in GitHub's webhook settings",
			Tolerance: "GitHub signs no timestamp: a delivery GUID seen before is a duplicate, whatever the body",
			Example: head + "ID=$(cat /proc/sys/kernel/random/uuid)\n" +
				"SIG=$(printf %s \"$BODY\" | openssl dgst -sha256 -hmac \"$SECRET\" | sed 's/^.*= //')\n" +
				post + " -H \"" + verifier.HeaderGitHubDelivery + ": $ID\" -H '" + verifier.HeaderGitHubEvent + ": push'" +
				" -H \"" + verifier.HeaderGitHubSignature + ": sha256=$SIG\" --data-binary \"$BODY\"\n",
		}
	case verifier.KindStripe:
		return signingHelp{
			Headers: []headerHelp{
				{verifier.HeaderStripeSignature, "t=<Unix seconds>,v1=<hex of the HMAC-SHA256>"},
			},
			Signed:    "HMAC-SHA256 of <t>.<raw body>, keyed with the whole endpoint secret (whsec_…) as Stripe shows it; the message id is the body's \"id\" (evt_…) and the provider type its \"type\"",
			Tolerance: tol,
			Example: strings.Replace(head, exampleBody, `{"id":"evt_1","type":"invoice.paid"}`, 1) + "TS=$(date +%s)\n" +
				"SIG=$(printf '%s.%s' \"$TS\" \"$BODY\" | openssl dgst -sha256 -hmac \"$SECRET\" | sed 's/^.*= //')\n" +
				post + " -H \"" + verifier.HeaderStripeSignature + ": t=$TS,v1=$SIG\" --data-binary \"$BODY\"\n",
		}
	case verifier.KindHMAC:
		return hmacSigning(src, tol, head, post)
	}
	return signingHelp{Signed: "the " + src.Verifier + " kind's own scheme"}
}

// hmacSigning describes the generic kind as its options configure it.
func hmacSigning(src source, tol, head, post string) signingHelp {
	o := src.Options
	prefix, encoding, payload := o["signature_prefix"], o["encoding"], o["payload"]
	if encoding == "" {
		encoding = verifier.EncodingHex
	}
	if payload == "" {
		payload = verifier.PayloadBody
	}
	h := signingHelp{Headers: []headerHelp{{o["signature_header"], prefix + "<" + encoding + " of the HMAC-SHA256>"}}}
	var script, signed strings.Builder
	script.WriteString(head)
	curl := post
	if id := o["id_header"]; id != "" {
		h.Headers = append(h.Headers, headerHelp{id, "the message's unique id"})
		script.WriteString("ID=\"msg_$(date +%s%N)\"\n")
		curl += " -H \"" + id + ": $ID\""
	}
	ts := o["timestamp_header"]
	if ts != "" {
		format := o["timestamp_format"]
		now := "$(date +%s)"
		switch format {
		case verifier.TimestampUnixMs:
			now = "$(date +%s%3N)"
		case verifier.TimestampRFC3339:
			now = "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
		}
		if format == "" {
			format = verifier.TimestampUnix
		}
		h.Headers = append(h.Headers, headerHelp{ts, "when it was signed (" + format + ")"})
		script.WriteString("TS=" + now + "\n")
		curl += " -H \"" + ts + ": $TS\""
		h.Tolerance = tol
	} else {
		h.Tolerance = "this source signs no timestamp: a message id seen before is a duplicate"
	}
	if et := o["event_type_header"]; et != "" {
		h.Headers = append(h.Headers, headerHelp{et, "the event type (not signed), kept as the message's provider type"})
		curl += " -H '" + et + ": order.created'"
	}
	signed.WriteString("HMAC-SHA256 of ")
	var input string
	switch payload {
	case verifier.PayloadTimestampBody:
		signed.WriteString("<timestamp>.<raw body>")
		input = `printf '%s.%s' "$TS" "$BODY"`
	case verifier.PayloadIDTimestampBody:
		signed.WriteString("<id>.<timestamp>.<raw body>")
		input = `printf '%s.%s.%s' "$ID" "$TS" "$BODY"`
	default:
		signed.WriteString("the raw body")
		input = `printf %s "$BODY"`
	}
	signed.WriteString(", keyed with the secret's bytes as pasted, encoded " + encoding)
	if prefix != "" {
		signed.WriteString(" after the prefix " + prefix)
	}
	h.Signed = signed.String()
	sig := input + " | openssl dgst -sha256 -hmac \"$SECRET\" | sed 's/^.*= //'"
	if encoding == verifier.EncodingBase64 {
		sig = input + " | openssl dgst -sha256 -hmac \"$SECRET\" -binary | base64 -w0"
	}
	script.WriteString("SIG=$(" + sig + ")\n")
	if prefix != "" {
		script.WriteString("SIG=" + shellQuote(prefix) + "\"$SIG\"\n")
	}
	script.WriteString(curl + " -H \"" + o["signature_header"] + ": $SIG\" --data-binary \"$BODY\"\n")
	h.Example = script.String()
	return h
}

// shellQuote quotes s for a POSIX shell: one single-quoted word.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
