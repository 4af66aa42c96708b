package fsops

// SetDiffBudget changes the work budget of one line alignment and returns a
// function that restores it.
func SetDiffBudget(n int) (restore func()) {
	old := diffBudget
	diffBudget = n
	return func() { diffBudget = old }
}
