package analyze

// Severity: how a finding's saving, as a share of the step, ranks it, the
// one rule every analyzer applies (SeverityHighShare, SeverityMediumShare).

// severityByShare maps a saving's share of the step to a severity.
func severityByShare(share float64) string {
	switch {
	case share >= SeverityHighShare:
		return High
	case share >= SeverityMediumShare:
		return Medium
	}
	return Low
}

// lowerSeverity returns the lower of two severities.
func lowerSeverity(a, b string) string {
	rank := map[string]int{Low: 0, Medium: 1, High: 2}
	if rank[b] < rank[a] {
		return b
	}
	return a
}
