package riverjob

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestQueueConfigsGiveEachQueueItsWorkers(t *testing.T) {
	t.Parallel()
	qs := queueConfigs(20, 200, 40)
	require.Len(t, qs, 4)
	require.Equal(t, 20, qs[QueueDefault].MaxWorkers)
	require.Equal(t, 200, qs[QueueWebhooks].MaxWorkers)
	require.Equal(t, 40, qs[QueueInbound].MaxWorkers)
	require.Equal(t, CorpusWorkers, qs[QueueCorpus].MaxWorkers)
	for name, q := range qs {
		// 0: River takes the client's FetchPollInterval, as the lanes
		// AddQueue adds do.
		require.Zero(t, q.FetchPollInterval, name)
	}
}
