package riverjob

import (
	"testing"

	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"
)

func TestInChainReadsTheTagAndTheMetadataOfEarlierJobs(t *testing.T) {
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
		{"marked in metadata by an earlier version", nil, `{"standmeet_chain": true}`, true},
		{"tagged, a run left the chain", []string{ChainTag}, `{"output": {"left_chain": true}}`, false},
		{"marked in metadata, a run left the chain", nil, `{"standmeet_chain": true, "output": {"left_chain": true}}`, false},
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
