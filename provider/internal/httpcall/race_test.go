//go:build race

package httpcall

// raceOn: the race detector changes what allocates.
const raceOn = true
