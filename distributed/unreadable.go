package distributed

import (
	"errors"
	"fmt"

	"github.com/tracelens/tracelens/ingest"
)

// keepReadable decides, after the ranks of a run were read, whether the
// run goes on without the files that could not be read (the non-nil
// errs, each naming its file): it does when at least one rank was read and no error is a
// memory budget's (raising the budget is the remedy, not a smaller
// run). It returns the warnings that mark the run incomplete, one per
// unreadable file, and false when the read must fail with errs joined.
// One corrupt or non-trace file used to block the whole directory
// (issue 27).
func keepReadable(errs []error) ([]string, bool) {
	read := 0
	for _, err := range errs {
		var be *ingest.BudgetError
		if errors.As(err, &be) {
			return nil, false
		}
		if err == nil {
			read++
		}
	}
	if read == 0 {
		return nil, false
	}
	var warn []string
	for _, err := range errs {
		if err != nil {
			warn = append(warn, fmt.Sprintf("incomplete run: a rank file was not read: %v; the analysis covers the %d ranks read", err, read))
		}
	}
	return warn, true
}
