//go:build race

package rawjson

// raceOn: the race detector changes what allocates.
const raceOn = true
