package bench

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOnlyReplicasRunsW2AndTheOneProcessBaselineBeforeTheReplicaSteps(t *testing.T) {
	t.Parallel()
	steps := []string{"ceilings", "start", "w5", "w1", "w2", "reasons", "w3", "w4", "publish", "memory", "endpoints", "replicas1", "replicas2", "replicas3"}
	for _, c := range []struct {
		only string
		want []string
	}{
		{"", steps},
		{"replicas", []string{"ceilings", "start", "w2", "replicas1", "replicas2", "replicas3"}},
		{"endpoints", []string{"ceilings", "start", "w2", "endpoints"}},
		{"w3", []string{"ceilings", "start", "w3"}},
	} {
		t.Run(c.only, func(t *testing.T) {
			t.Parallel()
			o := Options{}
			if c.only != "" {
				o.Only = map[string]bool{c.only: true}
			}
			var got []string
			for _, s := range steps {
				if o.want(s) {
					got = append(got, s)
				}
			}
			require.Equal(t, c.want, got)
		})
	}
}
