package entity

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAllowsCorpusEntry(t *testing.T) {
	t.Parallel()
	pub := func(uri string) CorpusEntry { return CorpusEntry{URI: uri, Published: true} }
	draft := func(uri string) CorpusEntry { return CorpusEntry{URI: uri} }
	cases := []struct {
		name          string
		role, deny    []string
		publishedOnly bool
		entry         CorpusEntry
		want          bool
	}{
		{"role glob admits", []string{"wiki://software/*"}, nil, true, pub("wiki://software/a"), true},
		{"outside role", []string{"wiki://software/*"}, nil, true, pub("wiki://life/a"), false},
		{"deny wins", []string{"wiki://*"}, []string{"wiki://private/*"}, true, pub("wiki://private/x"), false},
		{"deny elsewhere", []string{"wiki://*"}, []string{"wiki://private/*"}, true, pub("wiki://public/x"), true},
		{"published only refuses draft", []string{"*"}, nil, true, draft("wiki://a"), false},
		{"full reader sees draft", []string{"*"}, nil, false, draft("wiki://a"), true},
		{"raw never", []string{"*"}, nil, false, pub("raw://inbox/1"), false},
		{"raw upper-case never", []string{"*"}, nil, false, pub("RAW://inbox/1"), false},
		{"raw explicit glob never", []string{"raw://*"}, nil, false, pub("raw://inbox/1"), false},
		{"empty role admits nothing", nil, nil, false, pub("wiki://a"), false},
		{"empty uri", []string{"*"}, nil, false, pub(""), false},
		{"second role glob admits", []string{"wiki://a/*", "writing://*"}, nil, true, pub("writing://essay"), true},
		{"deny of the exact uri", []string{"wiki://*"}, []string{"wiki://a/b"}, true, pub("wiki://a/b"), false},
		{"deny of a sibling only", []string{"wiki://*"}, []string{"wiki://a/b"}, true, pub("wiki://a/bc"), true},
		{"published-only admits published", []string{"wiki://*"}, nil, true, pub("wiki://a"), true},
		{"deny all", []string{"wiki://*"}, []string{"*"}, false, pub("wiki://a"), false},
		{"raw with deny elsewhere never", []string{"*"}, []string{"wiki://*"}, false, draft("raw://x"), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, c.want, AllowsCorpusEntry(c.role, c.deny, c.publishedOnly, c.entry))
		})
	}
}
