package httpx_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"time"

	"github.com/standmeet/standmeet/internal/infra/httpx"
)

func ExampleCheckAddr() {
	for _, s := range []string{"8.8.8.8", "169.254.169.254", "64:ff9b::a9fe:a9fe", "2606:4700::1"} {
		fmt.Println(httpx.CheckAddr(netip.MustParseAddr(s), nil))
	}
	// Output:
	// <nil>
	// httpx: egress to 169.254.169.254 refused: link-local (169.254.0.0/16)
	// httpx: egress to 64:ff9b::a9fe:a9fe refused: NAT64 address embeds 169.254.169.254, link-local (169.254.0.0/16)
	// <nil>
}

func ExampleParseAllowList() {
	allow, err := httpx.ParseAllowList("127.0.0.0/8, ::1")
	fmt.Println(allow, err)
	_, err = httpx.ParseAllowList("10.0.0.1/8")
	fmt.Println(err)
	// Output:
	// [127.0.0.0/8 ::1/128] <nil>
	// list entry 1 "10.0.0.1/8": host bits set: write 10.0.0.0/8 for the network or 10.0.0.1/32 for the host
}

// A webhook sender: internal addresses refused, no redirects, 64 KiB of
// response kept.
func ExampleNewClient() {
	client := httpx.NewClient(httpx.Options{
		BlockInternalEgress: true,
		NoRetry:             true,
		Timeout:             5 * time.Second,
	})
	req, err := http.NewRequest(http.MethodPost, "https://receiver.example/hooks", nil)
	if err != nil {
		panic(err)
	}
	resp, err := client.Do(req)
	if errors.Is(err, httpx.ErrBlocked) {
		fmt.Println("refused by policy, not retried:", err)
		return
	}
	if err != nil {
		fmt.Println("delivery failed:", err)
		return
	}
	body, truncated, err := client.ReadBody(resp)
	fmt.Println(resp.StatusCode, len(body), truncated, err)
}
