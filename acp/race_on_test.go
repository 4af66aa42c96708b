//go:build race

package acp

// raceEnabled scales load tests down under the race detector (10× slower).
const raceEnabled = true
