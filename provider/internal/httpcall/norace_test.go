//go:build !race

package httpcall

const raceOn = false
