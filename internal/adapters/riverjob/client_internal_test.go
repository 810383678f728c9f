package riverjob

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestQueueConfigsPollNotifiedQueuesAtTheirOwnInterval(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name                       string
		cfg                        Config
		wantDelivery, wantNotified time.Duration
	}{
		{"both set", Config{FetchPollInterval: 50 * time.Millisecond, NotifiedPollInterval: 250 * time.Millisecond}, 0, 250 * time.Millisecond},
		{"notified unset follows the fetch poll", Config{FetchPollInterval: 50 * time.Millisecond}, 0, 50 * time.Millisecond},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			qs := queueConfigs(c.cfg, 20, 200, 40)
			require.Len(t, qs, 4)
			// The delivery queue keeps the client's poll (0 = River takes
			// the client's FetchPollInterval), as do the lanes AddQueue adds.
			require.Equal(t, c.wantDelivery, qs[QueueWebhooks].FetchPollInterval)
			require.Equal(t, 200, qs[QueueWebhooks].MaxWorkers)
			for _, q := range []string{QueueDefault, QueueInbound, QueueCorpus} {
				require.Equal(t, c.wantNotified, qs[q].FetchPollInterval, q)
			}
			require.Equal(t, 20, qs[QueueDefault].MaxWorkers)
			require.Equal(t, 40, qs[QueueInbound].MaxWorkers)
			require.Equal(t, CorpusWorkers, qs[QueueCorpus].MaxWorkers)
		})
	}
}
