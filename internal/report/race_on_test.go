//go:build race

package report

// raceEnabled: the race detector slows the fixture (a child of this test
// binary) down several times, so the tests offer less work.
const raceEnabled = true
