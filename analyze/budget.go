package analyze

// checkBudget calls Config.Budget, if set: the memory check runWith makes
// between facts and between analyzers, so that an analysis over a trace
// too big for --max-memory stops with the caller's error (naming the
// stage) rather than growing the process past its budget.
func checkBudget(budget func() error) error {
	if budget == nil {
		return nil
	}
	return budget()
}
