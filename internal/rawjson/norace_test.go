//go:build !race

package rawjson

const raceOn = false
