package riverjob

import (
	"testing"

	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"
)

func TestInChainReadsTheTagAndTheRecordedOutput(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		tags     []string
		metadata string
		want     bool
	}{
		{"tagged", []string{ChainTag}, `{}`, true},
		{"tagged and pending", []string{ChainTag, ChainFullTag}, `{}`, true},
		{"tagged, no metadata at all", []string{ChainTag}, ``, true},
		{"tagged, a run left the chain", []string{ChainTag}, `{"output": {"left_chain": true}}`, false},
		{"not in a chain", nil, `{}`, false},
		{"another tag", []string{"other"}, `{}`, false},
		{"unreadable metadata", []string{ChainTag}, `{`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, c.want, inChain(&rivertype.JobRow{Tags: c.tags, Metadata: []byte(c.metadata)}))
		})
	}
}
