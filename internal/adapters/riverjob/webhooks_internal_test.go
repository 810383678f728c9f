package riverjob

import (
	"testing"

	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"
)

// TestErredLastReadsTheErrorOfThePreviousAttempt proves that a run learns
// its previous attempt erred only from an error River recorded for that
// very attempt.
func TestErredLastReadsTheErrorOfThePreviousAttempt(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		attempt int
		errs    []int
		want    bool
	}{
		{"first attempt", 1, nil, false},
		{"second attempt, first erred", 2, []int{1}, true},
		{"second attempt, no error recorded", 2, nil, false},
		{"third attempt, only the first erred", 3, []int{1}, false},
		{"third attempt, both erred", 3, []int{1, 2}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			job := &rivertype.JobRow{Attempt: c.attempt}
			for _, a := range c.errs {
				job.Errors = append(job.Errors, rivertype.AttemptError{Attempt: a})
			}
			require.Equal(t, c.want, erredLast(job))
		})
	}
}
